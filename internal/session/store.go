package session

import (
	"unsafe"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	runstore "github.com/fwlab/fwlab/internal/store"
)

// The trace store keeps every record in the run store's own compact form:
// the records come in chunks of chunkSize; the chunk being filled holds the
// records as they were made, and a full chunk is sealed into one encoded
// batch (runstore.EncodeBatch, the codec of the run store: bit-exact, its
// floats XORed with the previous value of their column, so a record of a
// long trace takes some tens of bytes where a solver.Record with its
// pointers and Extra map takes 300–500). Chunks never change once sealed
// and the open one is only appended to, so readers may read the records
// [0, n) of a view without a lock while the writer appends.
//
// bytes is what the trace really holds, measured: the sealed batches'
// sizes plus the open chunk's records (their structs, the values their
// pointers hold, and their Extra maps as the runtime lays them out).

const (
	chunkBits = 8
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

// store is a trace's records. Appends come from one goroutine; the caller
// guards the store's fields with the trace's lock.
type store struct {
	sealed    [][]byte        // full chunks, encoded
	open      []solver.Record // the chunk being filled (capacity chunkSize)
	n         int
	bytes     int64 // held, measured (see above)
	openBytes int64 // the open chunk's share of bytes
	buf       []byte
}

// recordBytes is the memory a record held as made takes: its struct, the
// floats its pointers hold, and its Extra map (the runtime's map of
// float64 by string: about 8 bytes of control and 24 of slot per entry,
// with room to grow; the keys' bytes are shared with the solver's).
func recordBytes(rec *solver.Record) int64 {
	b := int64(unsafe.Sizeof(*rec))
	for _, f := range recordfields.StructOpts {
		if f.OptPtr(rec) != nil {
			b += 8
		}
	}
	if n := len(rec.Extra); n > 0 {
		b += 48 + 40*int64(n)
	}
	return b
}

func (s *store) append(rec *solver.Record) {
	if s.open == nil {
		// A fresh slice for every chunk: a view taken before may still
		// read the chunk just sealed.
		s.open = make([]solver.Record, 0, chunkSize)
		s.bytes += int64(unsafe.Sizeof(solver.Record{})) * chunkSize
		s.openBytes = int64(unsafe.Sizeof(solver.Record{})) * chunkSize
	}
	s.open = append(s.open, *rec)
	rb := recordBytes(rec) - int64(unsafe.Sizeof(*rec))
	s.bytes += rb
	s.openBytes += rb
	s.n++
	if len(s.open) == chunkSize {
		blob := runstore.EncodeBatch(s.buf[:0], s.open)
		s.buf = blob
		blob = append([]byte(nil), blob...) // sized to fit (the buffer grew by doubling)
		s.sealed = append(s.sealed, blob)
		s.bytes += int64(cap(blob)) + int64(unsafe.Sizeof(blob)) - s.openBytes
		s.openBytes = 0
		s.open = nil
	}
}

// view is a snapshot of a store: the records [0, n) may be read without a
// lock, since they never change once stored and the chunks never move.
type view struct {
	sealed [][]byte
	open   []solver.Record
	n      int
}

func (s *store) view() view {
	return view{sealed: s.sealed[:len(s.sealed):len(s.sealed)], open: s.open[:len(s.open):len(s.open)], n: s.n}
}

// scratch lets fill reuse its allocations from one record to the next, and
// holds the chunk it decoded last.
type scratch struct {
	opts  []float64 // the values of the record's optional numbers (recordfields.StructOpts)
	extra map[string]float64
	chunk int // the decoded chunk's index + 1 (0: none)
	recs  []solver.Record
}

// at returns record i of the view: from the open chunk, or decoded from its
// sealed chunk into sc (which then holds the chunk for the next call).
func (v *view) at(i int, sc *scratch) *solver.Record {
	c := i >> chunkBits
	if c >= len(v.sealed) {
		return &v.open[i&chunkMask]
	}
	if sc.chunk != c+1 {
		recs, err := runstore.DecodeBatch(sc.recs[:0], v.sealed[c])
		if err != nil || len(recs) != chunkSize {
			// The batch was encoded here from chunkSize records: never.
			panic("session: a sealed chunk of records does not decode")
		}
		sc.recs, sc.chunk = recs, c+1
	}
	return &sc.recs[i&chunkMask]
}

// fill sets rec to record i; its pointers and map point into sc and are
// overwritten by the next fill.
func (v *view) fill(i int, rec *solver.Record, sc *scratch) {
	src := v.at(i, sc)
	*rec = *src
	if sc.opts == nil {
		sc.opts = make([]float64, len(recordfields.StructOpts))
	}
	for j, f := range recordfields.StructOpts {
		if p := f.OptPtr(src); p != nil {
			sc.opts[j] = *p
			f.SetOptPtr(rec, &sc.opts[j])
		}
	}
	rec.Extra = nil
	if len(src.Extra) > 0 {
		if sc.extra == nil {
			sc.extra = make(map[string]float64, len(src.Extra))
		} else {
			clear(sc.extra)
		}
		for k, x := range src.Extra {
			sc.extra[k] = x
		}
		rec.Extra = sc.extra
	}
}

// copyOut returns record i with pointers and a map of its own.
func (v *view) copyOut(i int, sc *scratch) solver.Record {
	src := v.at(i, sc)
	rec := *src
	for _, f := range recordfields.StructOpts {
		if p := f.OptPtr(&rec); p != nil {
			f.SetOpt(&rec, *p)
		}
	}
	rec.Extra = nil
	if len(src.Extra) > 0 {
		rec.Extra = make(map[string]float64, len(src.Extra))
		for k, x := range src.Extra {
			rec.Extra[k] = x
		}
	}
	return rec
}

// lastSummary fills the figures of a summary from the view's records: the
// last record's iteration, passes and time, and the objective and gap of
// the last evaluated record.
func (v *view) lastSummary() solver.Summary {
	var s solver.Summary
	if v.n == 0 {
		return s
	}
	var sc scratch
	last := v.at(v.n-1, &sc)
	s.Iters, s.Passes, s.Time = last.K, last.Passes, last.Time
	for i := v.n - 1; i >= 0; i-- {
		if r := v.at(i, &sc); r.Objective != nil {
			s.Objective = *r.Objective
			if r.Gap != nil {
				s.Gap = *r.Gap
			}
			break
		}
	}
	return s
}
