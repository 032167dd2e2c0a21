package session

import (
	"github.com/fwlab/fwlab/internal/solver"
)

// The trace store keeps every record in a compact form: fixed-size rows in
// chunks that never move once allocated (no copying as the trace grows, and
// readers may keep reading a chunk while the writer appends), the step kind
// and the Extra keys interned per trace, and the Extra values in a chunked
// arena. A record costs about 100 bytes plus 16 per Extra value, where a
// solver.Record with its pointers and map costs 300–500.

const (
	chunkBits = 12
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

// Row flags.
const (
	hasObjective = 1 << iota
	hasGap
	hasGradErr
)

type row struct {
	k, batch, active          int64
	passes, time, gamma       float64
	objective, gap, gradErr   float64
	fw, away, drops, cleanups int64
	extraOff                  int64
	extraN, step              uint32
	flags                     uint8
}

type kv struct {
	key uint32
	val float64
}

// store is a trace's records. Appends come from one goroutine; the caller
// guards the store's fields with the trace's lock, but the rows themselves
// are read without it (see view).
type store struct {
	rows   [][]row
	n      int
	extras [][]kv
	ne     int64
	names  []string // interned step kinds and Extra keys
	index  map[string]uint32
	last   uint32 // index of the last step kind interned
}

func (s *store) intern(name string) uint32 {
	if s.last < uint32(len(s.names)) && s.names[s.last] == name {
		return s.last // the same step kind as the record before: the common case
	}
	if i, ok := s.index[name]; ok {
		return i
	}
	if s.index == nil {
		s.index = map[string]uint32{}
	}
	i := uint32(len(s.names))
	s.names = append(s.names, name)
	s.index[name] = i
	return i
}

func (s *store) append(rec *solver.Record) {
	if s.n&chunkMask == 0 {
		s.rows = append(s.rows, make([]row, chunkSize))
	}
	r := &s.rows[s.n>>chunkBits][s.n&chunkMask]
	*r = row{
		k: int64(rec.K), batch: int64(rec.Batch), active: int64(rec.Active),
		passes: rec.Passes, time: rec.Time, gamma: rec.Gamma,
		fw: int64(rec.FWSteps), away: int64(rec.AwaySteps), drops: int64(rec.Drops), cleanups: int64(rec.Cleanups),
		step: s.intern(rec.Step), extraOff: s.ne,
	}
	s.last = r.step
	if rec.Objective != nil {
		r.flags |= hasObjective
		r.objective = *rec.Objective
	}
	if rec.Gap != nil {
		r.flags |= hasGap
		r.gap = *rec.Gap
	}
	if rec.GradErr != nil {
		r.flags |= hasGradErr
		r.gradErr = *rec.GradErr
	}
	for k, v := range rec.Extra {
		if s.ne&chunkMask == 0 {
			s.extras = append(s.extras, make([]kv, chunkSize))
		}
		s.extras[s.ne>>chunkBits][s.ne&chunkMask] = kv{key: s.intern(k), val: v}
		s.ne++
		r.extraN++
	}
	s.n++
}

// view is a snapshot of a store: the records [0, n) may be read without a
// lock, since they never change once stored and the chunks never move.
type view struct {
	rows   [][]row
	n      int
	extras [][]kv
	names  []string
}

func (s *store) view() view {
	return view{rows: s.rows[:len(s.rows):len(s.rows)], n: s.n, extras: s.extras[:len(s.extras):len(s.extras)], names: s.names[:len(s.names):len(s.names)]}
}

func (v *view) row(i int) *row { return &v.rows[i>>chunkBits][i&chunkMask] }

// scratch lets fill reuse its allocations from one record to the next.
type scratch struct {
	objective, gap, gradErr float64
	extra                   map[string]float64
}

// fill sets rec to record i. With sc, rec's pointers and map point into sc
// and are overwritten by the next fill; without, they are fresh.
func (v *view) fill(i int, rec *solver.Record, sc *scratch) {
	r := v.row(i)
	if sc == nil {
		sc = &scratch{}
	}
	*rec = solver.Record{
		K: int(r.k), Passes: r.passes, Time: r.time, Step: v.names[r.step], Gamma: r.gamma,
		Batch: int(r.batch), Active: int(r.active),
		FWSteps: int(r.fw), AwaySteps: int(r.away), Drops: int(r.drops), Cleanups: int(r.cleanups),
	}
	if r.flags&hasObjective != 0 {
		sc.objective = r.objective
		rec.Objective = &sc.objective
	}
	if r.flags&hasGap != 0 {
		sc.gap = r.gap
		rec.Gap = &sc.gap
	}
	if r.flags&hasGradErr != 0 {
		sc.gradErr = r.gradErr
		rec.GradErr = &sc.gradErr
	}
	if r.extraN > 0 {
		if sc.extra == nil {
			sc.extra = make(map[string]float64, r.extraN)
		} else {
			clear(sc.extra)
		}
		for j := r.extraOff; j < r.extraOff+int64(r.extraN); j++ {
			e := v.extras[j>>chunkBits][j&chunkMask]
			sc.extra[v.names[e.key]] = e.val
		}
		rec.Extra = sc.extra
	}
}
