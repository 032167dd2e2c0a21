package session

import (
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	runstore "github.com/fwlab/fwlab/internal/store"
)

// The trace store keeps every record in the run store's own compact form:
// the records come in chunks; the chunk being filled holds the records as
// they were made, encoded encodeGroup at a time as they come
// (runstore.BatchEncoder), and a chunk is sealed into one encoded batch
// (the codec of the run store: bit-exact, its floats
// XORed with the previous value of their column, so a record of a long
// trace takes some tens of bytes where a solver.Record with its pointers
// and Extra map takes 300–500). Chunks never change once sealed and the
// open one is only appended to, so readers may read the records [0, n) of
// a view without a lock while the writer appends.
//
// A run without a run store seals a chunk at chunkSize records. A run with
// one seals it at the run store's batch size (runstore.MaxBatchRecords) or
// when the run store's appender is about to write (Run.setAppender),
// whichever comes first, and hands the sealed batch to the appender as it
// is: a record is encoded once, for the trace's memory and for the store,
// and the store's batches are those it would have written itself.
//
// bytes is what the trace really holds, measured: the sealed batches'
// sizes plus the open chunk's records (their structs, the values their
// pointers hold, and their Extra maps as the runtime lays them out), and
// the spare chunk's array.
//
// The array of a chunk that no view saw while it was open is kept when
// the chunk is sealed (cleared) and the next chunk is filled in it: a
// fresh array of a run store's batch (4 096 records, 512 KB) costs the
// recorder more than sealing it, most of it in zeroing memory the system
// has just handed back (BENCHMARKS.md, "The record path"). A chunk a view
// saw gets a fresh array, since the view may still be reading the old one.

const chunkSize = 256

// encodeGroup is how many of the open chunk's records are encoded at a
// time. Encoded each as it comes, between two of a method's steps, a
// record costs the encoder its code and tables back into the caches;
// encoded with its whole chunk of a run store's batch (4 096 records, 512
// KB), the records themselves have left them (BENCHMARKS.md, "The record
// path").
const encodeGroup = 256

// store is a trace's records. Appends come from one goroutine; the caller
// guards the store's fields with the trace's lock.
type store struct {
	sealed    [][]byte              // the sealed chunks, encoded
	ends      []int                 // ends[c]: the records in chunks 0 to c
	open      []solver.Record       // the chunk being filled
	enc       runstore.BatchEncoder // the open chunk's records [0, encoded), encoded
	encoded   int
	viewed    atomic.Bool     // a view has seen the open chunk (views are taken under the trace's read lock)
	spare     []solver.Record // the array of the last chunk sealed, when no view saw it: the next chunk's
	limit     int             // the open chunk is sealed at this many records (0: chunkSize)
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

const recordSize = int64(unsafe.Sizeof(solver.Record{}))

// append stores rec. When rec fills the open chunk, append seals it and
// returns its batch, which the run store's appender may share (it never
// changes).
func (s *store) append(rec *solver.Record) (sealed runstore.Batch) {
	limit := s.limit
	if limit == 0 {
		limit = chunkSize
	}
	if s.open == nil {
		// A fresh slice for a chunk unless the last one's is spare: a
		// view taken before may still read the chunk just sealed. It
		// starts as large as the last one (a run store's chunks end with
		// its writes as often as full).
		if s.spare != nil {
			s.open, s.spare = s.spare, nil
			s.bytes -= recordSize * int64(cap(s.open)) // counted again below
		} else {
			c := chunkSize
			if k := len(s.ends); k > 0 {
				c = max(64, s.ends[k-1]-s.start(k-1))
			}
			s.open = make([]solver.Record, 0, min(c, limit))
		}
		s.viewed.Store(false)
		s.bytes += recordSize * int64(cap(s.open))
		s.openBytes = recordSize * int64(cap(s.open))
	}
	if c := cap(s.open); len(s.open) == c {
		// growing moves the records a view may be reading: it keeps the
		// old array, whose records never change. It doubles the room (up
		// to the limit), where append would add a quarter at this size and
		// copy the records more often.
		s.open = append(append(make([]solver.Record, 0, max(min(2*c, limit), c+1)), s.open...), *rec)
		grown := recordSize * int64(cap(s.open)-c)
		s.bytes += grown
		s.openBytes += grown
	} else {
		s.open = append(s.open, *rec)
	}
	if len(s.open)-s.encoded >= encodeGroup {
		s.encode()
	}
	rb := recordBytes(rec) - recordSize
	s.bytes += rb
	s.openBytes += rb
	s.n++
	if len(s.open) < limit {
		return runstore.Batch{}
	}
	return s.seal()
}

// start returns the index of chunk c's first record.
func (s *store) start(c int) int {
	if c == 0 {
		return 0
	}
	return s.ends[c-1]
}

// encode encodes the open chunk's records not encoded yet.
func (s *store) encode() {
	for ; s.encoded < len(s.open); s.encoded++ {
		s.enc.Add(&s.open[s.encoded])
	}
}

// seal turns the open chunk (which holds a record at least) into a sealed
// one and returns its batch.
func (s *store) seal() runstore.Batch {
	s.encode()
	s.encoded = 0
	blob := s.enc.AppendBlob(s.buf[:0])
	s.buf = blob
	blob = append([]byte(nil), blob...) // sized to fit, and not cleared first as a make would be
	s.sealed = append(s.sealed, blob)
	s.ends = append(s.ends, s.n)
	s.bytes += int64(cap(blob)) + int64(unsafe.Sizeof(blob)) + 8 - s.openBytes
	s.openBytes = 0
	b := runstore.Batch{N: len(s.open), Blob: blob}
	if !s.viewed.Load() {
		clear(s.open) // let go of what the records point to
		s.spare = s.open[:0]
		s.bytes += recordSize * int64(cap(s.spare))
	}
	s.open = nil
	return b
}

// dropSpare lets the spare chunk's array go (the trace has ended).
func (s *store) dropSpare() {
	s.bytes -= recordSize * int64(cap(s.spare))
	s.spare = nil
}

// sealOpen seals the open chunk, if it holds records, and returns its
// batch.
func (s *store) sealOpen() runstore.Batch {
	if len(s.open) == 0 {
		return runstore.Batch{}
	}
	return s.seal()
}

// view is a snapshot of a store: the records [0, n) may be read without a
// lock, since they never change once stored and the chunks never move.
type view struct {
	sealed [][]byte
	ends   []int
	open   []solver.Record
	n      int
}

func (s *store) view() view {
	s.viewed.Store(true)
	return view{sealed: s.sealed[:len(s.sealed):len(s.sealed)], ends: s.ends[:len(s.ends):len(s.ends)],
		open: s.open[:len(s.open):len(s.open)], n: s.n}
}

// scratch lets fill reuse its allocations from one record to the next, and
// holds the chunk it decoded last.
type scratch struct {
	opts   []float64 // the values of the record's optional numbers (recordfields.StructOpts)
	extra  map[string]float64
	lo, hi int // the records of the decoded chunk (none: lo == hi)
	recs   []solver.Record
}

// at returns record i of the view: from the open chunk, or decoded from its
// sealed chunk into sc (which then holds the chunk for the next call).
func (v *view) at(i int, sc *scratch) *solver.Record {
	sealed := 0
	if k := len(v.ends); k > 0 {
		sealed = v.ends[k-1]
	}
	if i >= sealed {
		return &v.open[i-sealed]
	}
	if i < sc.lo || i >= sc.hi {
		c := sort.SearchInts(v.ends, i+1) // the first chunk that ends past i
		lo := 0
		if c > 0 {
			lo = v.ends[c-1]
		}
		recs, err := runstore.DecodeBatch(sc.recs[:0], v.sealed[c])
		if err != nil || len(recs) != v.ends[c]-lo {
			// The batch was encoded here from those records: never.
			panic("session: a sealed chunk of records does not decode")
		}
		sc.recs, sc.lo, sc.hi = recs, lo, v.ends[c]
	}
	return &sc.recs[i-sc.lo]
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
