package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/fwlab/fwlab/internal/fulldisk"
	"github.com/fwlab/fwlab/internal/store"
)

// A bundle's records are read by two goroutines (convert.go): the reader
// checks them as JSON, the converter reads their values after it. Whatever
// each finds, the error reported is the first in the document's order, as
// one reading everything in turn reports it: a bad value in record j that
// the converter reads after the reader has met a malformed record further
// on (in the same batch, batches later, the last batch) or the document's
// end names record j; in one record, the record's JSON comes before its
// values. Decode and Import agree, and nothing is left running.
func TestFirstErrorWhateverStageFindsIt(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 3*chunkRecords + 500 // three whole batches and a part
	doc := encodeT(t, runBundle(1, n))
	// the start of record k (its line: one a record)
	at := func(d []byte, k int) int {
		i := bytes.Index(d, fmt.Appendf(nil, "\n{\"k\":%d,", k))
		if i < 0 {
			t.Fatalf("record %d not found", k)
		}
		return i + 1
	}
	lineOf := func(d []byte, i int) int { return 1 + bytes.Count(d[:i], []byte{'\n'}) }
	// edit replaces the first old after the start of record k with new
	edit := func(d []byte, k int, old, new string) []byte {
		i := at(d, k)
		j := bytes.Index(d[i:], []byte(old))
		if j < 0 || bytes.IndexByte(d[i:i+j], '\n') >= 0 {
			t.Fatalf("%q not in record %d", old, k)
		}
		return append(append(bytes.Clone(d[:i+j]), new...), d[i+j+len(old):]...)
	}
	negBatch := func(d []byte, k int) []byte { return edit(d, k, `"batch":500`, `"batch":-500`) }
	malformed := func(d []byte, k int) []byte { return edit(d, k, `"step":`, `"step"::`) }
	j := chunkRecords + 17 // the middle of the second batch
	last := 3*chunkRecords + 100
	badBatch := func(d []byte, k int) (string, string) {
		return fmt.Sprintf("traces[0].records[%d].batch", k), fmt.Sprintf("must be non-negative, got -500 (line %d)", lineOf(d, at(d, k)))
	}
	for _, c := range []struct {
		name string
		doc  []byte
		want func(d []byte) (path, msg string)
	}{
		{"a bad value, a malformed record later in its batch", malformed(negBatch(doc, j), j+100),
			func(d []byte) (string, string) { return badBatch(d, j) }},
		{"a bad value, a malformed record batches later", malformed(negBatch(doc, j), 3*chunkRecords+10),
			func(d []byte) (string, string) { return badBatch(d, j) }},
		{"k not increasing, the document ends batches later", func() []byte {
			d := edit(doc, j, fmt.Sprintf(`{"k":%d,`, j), fmt.Sprintf(`{"k":%d,`, j-1))
			return d[:at(d, 2*chunkRecords+300)+40]
		}(), func(d []byte) (string, string) {
			return fmt.Sprintf("traces[0].records[%d].k", j),
				fmt.Sprintf("must be greater than the previous record's k (%d), got %d (line %d)", j-1, j-1, lineOf(doc, at(doc, j)))
		}},
		{"a bad value alone", negBatch(doc, j), func(d []byte) (string, string) { return badBatch(d, j) }},
		{"a bad value in the last batch, a malformed record after it", malformed(negBatch(doc, last), last+50),
			func(d []byte) (string, string) { return badBatch(d, last) }},
		{"a bad value and a malformed record in the first batch", malformed(negBatch(doc, 5), 6),
			func(d []byte) (string, string) { return badBatch(d, 5) }},
		{"a bad value and malformed JSON after it in one record", malformed(negBatch(doc, j), j),
			func(d []byte) (string, string) {
				i := bytes.Index(d[at(d, j):], []byte(`"step"::`)) + at(d, j) + len(`"step":`)
				return fmt.Sprintf("traces[0].records[%d]", j),
					fmt.Sprintf("invalid JSON at byte %d: invalid character ':' looking for beginning of value (line %d)", i, lineOf(d, i))
			}},
	} {
		path, msg := c.want(c.doc)
		_, derr := Decode(bytes.NewReader(c.doc))
		var be *Error
		if !errors.As(derr, &be) || be.Path != path || be.Msg != msg {
			t.Errorf("%s: Decode: %v; want %s: %s", c.name, derr, path, msg)
		}
		st, err := store.Open(filepath.Join(t.TempDir(), "fwlab.db"))
		if err != nil {
			t.Fatal(err)
		}
		_, ierr := Import(context.Background(), st, bytes.NewReader(c.doc))
		if !errors.As(ierr, &be) || be.Path != path || be.Msg != msg {
			t.Errorf("%s: Import: %v; want %s: %s", c.name, ierr, path, msg)
		}
		if _, total, err := st.List(context.Background(), store.Filter{}); err != nil || total != 0 {
			t.Errorf("%s: %d runs stored (%v)", c.name, total, err)
		}
		st.Close()
	}
}

// An import into a store whose disk fills up part-way (a real one: a
// small tmpfs) returns the store's failure, met while the reader and the
// converter are busy with the records after it, and ends every goroutine
// it started; the store keeps no run of it.
func TestImportOnAFullDiskEndsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := fulldisk.Dir(t, "4m")
	st, err := store.Open(filepath.Join(dir, "fwlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	doc := encodeT(t, runBundle(4, 30_000))
	res, err := Import(context.Background(), st, bytes.NewReader(doc))
	if err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("import onto a full disk: %+v, %v; want the store's failure (full)", res, err)
	}
	var be *Error
	if errors.As(err, &be) {
		t.Fatalf("the store's failure taken for the bundle's: %v", err)
	}
	t.Logf("import onto a full disk: %v", err)
	if _, total, lerr := st.List(context.Background(), store.Filter{}); lerr != nil || total != 0 {
		t.Errorf("%d runs stored (%v) after %v", total, lerr, err)
	}
}

// Two faults in different records, each one the reader finds (malformed
// JSON, a field's name) or one the converter finds (a value), at places
// drawn at random (in one batch or batches apart, either first): the error
// is the one of the first fault alone, as when one goroutine reads one
// record after another.
func TestFirstOfTwoFaultsIsReported(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 2*chunkRecords + 300
	doc := encodeT(t, runBundle(1, n))
	var starts []int // each record's first byte
	for i := 0; ; {
		j := bytes.Index(doc[i:], []byte("\n{\"k\":"))
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	if len(starts) != n {
		t.Fatalf("%d records found, want %d", len(starts), n)
	}
	// fault f of record k: the reader's (malformed JSON, a required field
	// missing, a field twice), then the converter's (a negative count, k not
	// increasing)
	faults := []func(k int) (old, new string){
		func(int) (string, string) { return `"step":`, `"step"::` },
		func(int) (string, string) { return `"gamma":`, `"gammma":` },
		func(int) (string, string) { return `"active":`, `"batch":1,"active":` },
		func(int) (string, string) { return `"batch":500`, `"batch":-500` },
		func(int) (string, string) { return `"active":`, `"active":-` },
		func(k int) (string, string) { return fmt.Sprintf(`{"k":%d,`, k), `{"k":0,` },
	}
	fault := func(d []byte, k, f int) []byte {
		old, new := faults[f](k)
		i := starts[k]
		j := bytes.Index(d[i:], []byte(old))
		if j < 0 || bytes.IndexByte(d[i:i+j], '\n') >= 0 {
			t.Fatalf("%q not in record %d", old, k)
		}
		return append(append(bytes.Clone(d[:i+j]), new...), d[i+j+len(old):]...)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 40 {
		j := 1 + rng.IntN(n-2)
		k := j + 1 + rng.IntN(min(n-j-1, []int{50, chunkRecords, n}[rng.IntN(3)]))
		a, b := rng.IntN(len(faults)), rng.IntN(len(faults))
		_, want := Decode(bytes.NewReader(fault(doc, j, a)))
		_, got := Decode(bytes.NewReader(fault(fault(doc, k, b), j, a)))
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("fault %d in record %d, fault %d in record %d: %v; want %v", a, j, b, k, got, want)
		}
	}
}
