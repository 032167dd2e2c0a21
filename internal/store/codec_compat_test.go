package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// A blob written by the record codec's version 1 (testdata/codec-v1.blob:
// two real LASSO traces, evaluated every third iteration, with extra
// metrics; testdata/codec-v1.json the same records) stays readable, bit for
// bit, whatever fields were added since; a build that adds none writes it
// byte for byte again (docs/compatibility.md).
func TestCodecReadsVersion1Blob(t *testing.T) {
	blob, err := os.ReadFile("testdata/codec-v1.blob")
	if err != nil {
		t.Fatal(err)
	}
	j, err := os.ReadFile("testdata/codec-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []solver.Record
	if err := json.Unmarshal(j, &want); err != nil {
		t.Fatal(err)
	}
	got, err := decodeBatch(nil, blob)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, want)
	if recordfields.Version == 1 {
		if again := encodeBatch(nil, want); !bytes.Equal(again, blob) {
			t.Fatalf("version 1's records encode to %d other bytes (first difference at %d)", len(again), firstDiff(again, blob))
		}
	}
	// what this build writes, it reads back
	checkRecords(t, mustDecode(t, encodeBatch(nil, want)), want)
}

// A blob of a newer codec is refused with both versions named.
func TestCodecRefusesNewerVersion(t *testing.T) {
	blob := encodeBatch(nil, []solver.Record{{K: 1, Step: "fw"}})
	blob[0] = byte(recordfields.Version + 1)
	_, err := decodeBatch(nil, blob)
	if !errors.Is(err, ErrNewerCodec) {
		t.Fatalf("error %v, want ErrNewerCodec", err)
	}
	for _, s := range []string{"version " + itoa(recordfields.Version+1), "1 to " + itoa(recordfields.Version)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func itoa(v int) string { b, _ := json.Marshal(v); return string(b) }

func mustDecode(t *testing.T, blob []byte) []solver.Record {
	t.Helper()
	recs, err := decodeBatch(nil, blob)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
