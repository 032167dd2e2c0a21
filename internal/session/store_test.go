package session

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	runstore "github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// synthetic builds a varied record: every optional field present or not,
// Extra maps of several sizes, several step kinds.
func synthetic(i int) solver.Record {
	r := solver.Record{
		K: i, Passes: float64(i) / 3, Time: float64(i) * 1e-6, Step: []string{"fw", "away", "drop", "block", "x-new"}[i%5],
		Gamma: 1 / float64(i+1), Batch: i * 7, Active: i % 11, FWSteps: i % 3, AwaySteps: i % 4, Drops: i % 2, Cleanups: i % 5,
	}
	if i%3 == 0 {
		r.Objective = solver.F(math.Sin(float64(i)))
	}
	if i%4 != 1 {
		r.Gap = solver.F(float64(-i))
	}
	if i%6 == 0 {
		r.GradErr = solver.F(math.Inf(1))
	}
	if n := i % 7; n > 0 {
		r.Extra = map[string]float64{}
		for j := 0; j < n; j++ {
			r.Extra[fmt.Sprintf("w:v%d", (i+j)%13)] = float64(i*j) - 0.5
		}
	}
	return r
}

func TestStoreRoundTrip(t *testing.T) {
	tr := &Trace{}
	const n = 3*chunkSize + 17 // several chunks of rows and of Extra values
	for i := 0; i < n; i++ {
		rec := synthetic(i)
		tr.store.append(&rec)
	}
	if tr.Len() != n {
		t.Fatalf("Len %d", tr.Len())
	}
	got := tr.Records(0, n+100)
	if len(got) != n {
		t.Fatalf("%d records back", len(got))
	}
	for i := range got {
		if want := synthetic(i); !reflect.DeepEqual(got[i], want) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want)
		}
	}
	// Each visits the same records with reused storage, and stops on false.
	seen := 0
	visited := tr.Each(chunkSize-2, chunkSize+5, func(i int, rec *solver.Record) bool {
		if want := synthetic(i); !reflect.DeepEqual(*rec, want) {
			t.Fatalf("Each record %d:\n got %+v\nwant %+v", i, *rec, want)
		}
		seen++
		return seen < 4
	})
	if visited != 4 || seen != 4 {
		t.Errorf("Each visited %d (fn saw %d), want 4", visited, seen)
	}
	if tr.Records(5, 5) != nil || tr.Records(n, n+1) != nil || tr.Each(-1, 3, nil) != 0 {
		t.Error("empty ranges return records")
	}
}

func TestLastSummaryFromStore(t *testing.T) {
	tr := &Trace{}
	for i := 1; i <= 10; i++ {
		rec := solver.Record{K: i, Passes: float64(i), Time: 0.1 * float64(i)}
		if i == 6 {
			rec.Objective, rec.Gap = solver.F(2.5), solver.F(0.25)
		}
		tr.store.append(&rec)
	}
	s := tr.failure("boom")
	want := solver.Summary{Objective: 2.5, Gap: 0.25, Iters: 10, Passes: 10, Time: 1, Status: solver.StatusFailed, Message: "boom"}
	if s != want {
		t.Errorf("summary %+v, want %+v", s, want)
	}
}

// BenchmarkStoreAppend reports the bytes a stored record costs.
func BenchmarkStoreAppend(b *testing.B) {
	recs := make([]solver.Record, 1024)
	for i := range recs {
		recs[i] = synthetic(i)
	}
	b.ReportAllocs()
	tr := &Trace{}
	for i := 0; i < b.N; i++ {
		tr.store.append(&recs[i&1023])
	}
}

// The store keeps every declared field of a record (internal/recordfields,
// the added field of a test build included) bit for bit, in sealed chunks
// and in the open one, and what Records hands out is the caller's own:
// writing through its pointers and map changes nothing stored.
func TestStoreKeepsEveryDeclaredField(t *testing.T) {
	const n = 2*chunkSize + 40
	want := recordfields.RandRecords(rand.New(rand.NewPCG(11, 12)), n, false)
	tr := &Trace{}
	for i := range want {
		rec := ownCopy(want[i]) // pointers and map of its own, as a method makes them
		tr.store.append(&rec)
	}
	check := func(when string) {
		got := tr.Records(0, n)
		if len(got) != n {
			t.Fatalf("%s: %d records back, want %d", when, len(got), n)
		}
		for i := range got {
			if d := recordfields.Diff(&got[i], &want[i]); d != "" {
				t.Fatalf("%s: record %d: %s", when, i, d)
			}
		}
		seen := 0
		tr.Each(0, n, func(i int, rec *solver.Record) bool {
			if d := recordfields.Diff(rec, &want[i]); d != "" {
				t.Fatalf("%s: Each record %d: %s", when, i, d)
			}
			seen++
			return true
		})
		if seen != n {
			t.Fatalf("%s: Each saw %d records, want %d", when, seen, n)
		}
	}
	check("stored")
	for _, r := range tr.Records(0, n) {
		for _, f := range recordfields.StructOpts {
			if p := f.OptPtr(&r); p != nil {
				*p = math.Pi
			}
		}
		for k := range r.Extra {
			r.Extra[k] = math.E
		}
	}
	check("after the records handed out were written to")
}

// ownCopy returns r with pointers and a map of its own.
func ownCopy(r solver.Record) solver.Record {
	for _, f := range recordfields.StructOpts {
		if p := f.OptPtr(&r); p != nil {
			f.SetOpt(&r, *p)
		}
	}
	if r.Extra != nil {
		r.Extra = maps.Clone(r.Extra)
	}
	return r
}

// A trace counts what its records really hold: the heap the store grows by,
// measured by the runtime, is within a few percent of store.bytes, and a
// record held takes far less than the RecordBytes reserved for it.
func TestStoreBytesMeasured(t *testing.T) {
	const n = 200*chunkSize + 100 // sealed chunks and an open one
	recs := make([]solver.Record, 1024)
	for i := range recs {
		recs[i] = synthetic(i)
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	tr := &Trace{}
	for i := 0; i < n; i++ {
		rec := recs[i&1023]
		rec.K = i
		tr.store.append(&rec)
	}
	grown := float64(heap()) - float64(before)
	held, count := tr.heldBytes()
	if count != n {
		t.Fatalf("%d records held, want %d", count, n)
	}
	if ratio := float64(held) / grown; ratio < 0.9 || ratio > 1.1 {
		t.Errorf("the store counts %d bytes; the heap grew by %.0f (ratio %.2f)", held, grown, ratio)
	}
	if per := float64(held) / n; per > RecordBytes/2 {
		t.Errorf("%.1f bytes a record held, over half of the %d reserved", per, RecordBytes)
	}
	t.Logf("%.1f bytes a record held (heap grew %.1f)", float64(held)/n, grown/n)
	runtime.KeepAlive(tr)
	runtime.KeepAlive(recs)
}

// A record from outside with any of its declared numbers not finite is
// refused naming that field.
func TestOutsideRecordChecksEveryNumber(t *testing.T) {
	ok := solver.Record{K: 1, Passes: 1, Time: 1, Step: solver.StepFW, Gamma: 0.5, Objective: solver.F(1), Gap: solver.F(1), GradErr: solver.F(1)}
	if err := checkOutsideRecord("records[0]", &ok); err != nil {
		t.Fatalf("a good record refused: %v", err)
	}
	checked := 0
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if f.Kind != recordfields.Float && (f.Kind != recordfields.OptFloat || f.IsSlot()) {
			continue
		}
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			r := ownCopy(ok)
			if f.Kind == recordfields.Float {
				f.SetFloat(&r, bad)
			} else {
				f.SetOpt(&r, bad)
			}
			err := checkOutsideRecord("records[0]", &r)
			want := "records[0]." + f.JSON + ": must be a finite number, got " + fmt.Sprint(bad)
			if err == nil || err.Error() != want {
				t.Errorf("%s = %v: %v, want %q", f.JSON, bad, err, want)
			}
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("%d numbers checked", checked)
	}
}

// With a run store, a trace's chunks are the store's batches: a chunk is
// sealed at the store's batch size or before each of the appender's
// writes, and handed to the appender as it is (a record is encoded once,
// for the trace's memory and for the store). The store's rows are the
// trace's chunks byte for byte, and the records read from either, over
// chunks of every size, are those made.
func TestChunksAreTheStoresBatches(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.db")
	st, err := runstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.PutRun(ctx, storetest.TestRun("lasso", "fw", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{}
	r.traces = []*Trace{{Index: 0, run: r}, {Index: 1, run: r}}
	a := st.NewAppender(id, time.Hour) // it writes when flushed here
	r.setAppender(a)
	var made [2]int
	// full chunks, writes in the middle of one, a write with nothing new,
	// a chunk that fills right at a write, records left for Close
	for _, step := range []struct {
		n     [2]int
		flush bool
	}{{[2]int{5000, 10}, true}, {[2]int{100, 0}, true}, {[2]int{0, 0}, true}, {[2]int{3996, 4086}, true},
		{[2]int{4096 + 10, 1}, false}, {[2]int{1, 9000}, true}, {[2]int{9000, 3}, false}} {
		for tr := range 2 {
			for range step.n[tr] {
				r.traces[tr].keep(synthetic(made[tr]))
				made[tr]++
			}
		}
		if step.flush {
			if err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for tr, tc := range r.traces {
		n := made[tr]
		// the rows: the trace's sealed chunks, in order, byte for byte
		rows, err := db.Query(`SELECT first_rec, n, data FROM batches WHERE run_id = ? AND trace = ? ORDER BY first_rec`, id, tr)
		if err != nil {
			t.Fatal(err)
		}
		c := 0
		for rows.Next() {
			var first, k int
			var data []byte
			if err := rows.Scan(&first, &k, &data); err != nil {
				t.Fatal(err)
			}
			if c >= len(tc.store.sealed) {
				t.Fatalf("trace %d: row %d (records %d to %d) beyond the %d chunks", tr, c, first, first+k, len(tc.store.sealed))
			}
			if first != tc.store.start(c) || first+k != tc.store.ends[c] || !bytes.Equal(data, tc.store.sealed[c]) {
				t.Fatalf("trace %d row %d: records %d to %d, %d bytes; chunk %d to %d, %d bytes", tr, c, first, first+k, len(data),
					tc.store.start(c), tc.store.ends[c], len(tc.store.sealed[c]))
			}
			if k > runstore.MaxBatchRecords {
				t.Errorf("trace %d row %d: %d records, beyond the store's batch size", tr, c, k)
			}
			c++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if c != len(tc.store.sealed) || len(tc.store.open) != 0 || tc.store.n != n {
			t.Errorf("trace %d: %d rows for %d chunks, %d records open, %d of %d kept", tr, c, len(tc.store.sealed), len(tc.store.open), tc.store.n, n)
		}
		stored, err := st.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		inMemory := tc.Records(0, n)
		if len(stored) != n || len(inMemory) != n {
			t.Fatalf("trace %d: %d records stored, %d in memory, %d made", tr, len(stored), len(inMemory), n)
		}
		for i := range n {
			want := synthetic(i)
			if d := recordfields.Diff(&stored[i], &want); d != "" {
				t.Fatalf("trace %d record %d from the store: %s", tr, i, d)
			}
			if d := recordfields.Diff(&inMemory[i], &want); d != "" {
				t.Fatalf("trace %d record %d from memory: %s", tr, i, d)
			}
		}
		// ranges across chunk ends, with the decoded chunk reused or not
		rng := rand.New(rand.NewPCG(uint64(tr), 5))
		for range 200 {
			lo := rng.IntN(n)
			hi := min(n, lo+1+rng.IntN(300))
			tc.Each(lo, hi, func(i int, rec *solver.Record) bool {
				if want := synthetic(i); !reflect.DeepEqual(*rec, want) {
					t.Fatalf("trace %d Each(%d, %d) record %d:\n got %+v\nwant %+v", tr, lo, hi, i, *rec, want)
				}
				return true
			})
		}
	}
	// the chunks sealed by size hold the store's batch size, those sealed
	// for a write what came before it
	if got := r.traces[0].store.ends[:3]; !reflect.DeepEqual(got, []int{4096, 5000, 5100}) {
		t.Errorf("trace 0's first chunks end at %v, want [4096 5000 5100]", got)
	}
}

// A sealed chunk's array is filled again by the next chunk only when no
// view saw it open; a view keeps reading the records it saw while later
// chunks fill, every sealed chunk is the store's encoding of its records
// (encoded encodeGroup at a time as they came).
func TestChunkArraysReusedOnlyUnseen(t *testing.T) {
	const limit = runstore.MaxBatchRecords
	s := store{limit: limit}
	var made []solver.Record
	add := func(n int) {
		for range n {
			rec := synthetic(len(made))
			made = append(made, rec)
			s.append(&rec)
		}
	}
	array := func() *solver.Record { return &s.open[:1][0] }

	add(1)
	first := array()
	add(limit - 1) // the first chunk grows from chunkSize to the store's batch

	if len(s.sealed) != 1 || s.spare == nil {
		t.Fatalf("%d chunks sealed, spare %v: want the first sealed and its array spare", len(s.sealed), s.spare != nil)
	}
	add(10)
	unseen := array()
	if unseen == first {
		t.Fatal("the first chunk's array before it grew was filled again")
	}
	add(limit - 10) // the second chunk, unseen, is sealed
	add(10)
	if array() != unseen {
		t.Fatal("the array of a chunk no view saw was not filled again")
	}
	// a view of the third chunk open: its array must stay as the view saw it
	v := s.view()
	seen := array()
	add(limit - 10 + 5)
	if array() == seen {
		t.Fatal("the array of a chunk a view saw was filled again")
	}
	add(3 * limit)
	var sc scratch
	var rec solver.Record
	for i := 0; i < v.n; i++ {
		v.fill(i, &rec, &sc)
		if !reflect.DeepEqual(rec, made[i]) {
			t.Fatalf("record %d read through an earlier view: %+v, want %+v", i, rec, made[i])
		}
	}
	// every sealed chunk is the encoding of its records
	for c := range s.sealed {
		want := runstore.EncodeBatch(nil, made[s.start(c):s.ends[c]])
		if !bytes.Equal(s.sealed[c], want) {
			t.Fatalf("chunk %d (records %d to %d): %d bytes, the records encode to %d", c, s.start(c), s.ends[c], len(s.sealed[c]), len(want))
		}
	}
	// a partial chunk sealed for a write, then the trace's end
	if b := s.sealOpen(); b.N != len(made)-s.ends[len(s.ends)-2] {
		t.Fatalf("sealOpen sealed %d records", b.N)
	}
	held := s.bytes
	spare := recordSize * int64(cap(s.spare))
	s.dropSpare()
	if s.spare != nil || s.bytes != held-spare {
		t.Errorf("after the trace's end: spare %v, %d bytes counted, want %d", s.spare != nil, s.bytes, held-spare)
	}
}
