package solver

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Work below block granularity. A block step of a problem that splits its
// work (SplitOracle, SplitModel) hands the parts to splitWork, the run's
// Parallel. While a pass over the chosen blocks (forChosen) has few blocks
// per worker, a worker that finds no block left does not leave: it takes
// parts of the blocks still running until every block is done (or no part
// has come its way for subSpin). Five equal blocks on two workers then take
// about 2.5 blocks' time, plus the parts of a step that do not split, instead
// of 3 (whole blocks allow at most 5/3 of one worker's speed). The parts are
// the problem's own (a fixed partition, whose results it combines in a fixed
// order), so the run does not depend on who takes which part.

// subJob is one open splitWork call: a range [0, n) handed out in chunks.
type subJob struct {
	owned atomic.Bool   // a splitWork call holds the slot
	open  atomic.Bool   // its chunks may be taken
	users atomic.Int64  // helpers inside; the owner waits for them before it returns
	wake  chan struct{} // a helper leaving a closed job wakes its waiting owner
	next  atomic.Int64
	n     int
	chunk int
	f     func(lo, hi int)
	// a panic of f on a helper, raised again by the owner (the block's
	// failure)
	panicked atomic.Bool
	panicVal any
}

// splitState is the run's part of the scheduling below block granularity.
type splitState struct {
	splitter SplitOracle
	splitMod SplitModel
	subPar   Parallel     // splitWork as a value made once
	subs     []subJob     // one slot per worker
	helping  bool         // the open forChosen pass lets idle workers help
	left     atomic.Int64 // blocks of that pass whose step has not finished
}

// splitHelps reports whether a pass over n blocks on the given number of
// workers lets idle workers take parts of running blocks: only when the
// problem splits its work and there are few blocks per worker (with many,
// taking them in chunks balances the workers already, and a worker that
// runs out of blocks should not spin).
func (st *fwRun) splitHelps(n, workers int) bool {
	return workers > 1 && (st.splitter != nil || st.splitMod != nil) && n <= 4*workers
}

// splitWork is the Parallel of a block step: outside a helping pass it runs
// f(0, n); inside one it opens the range to idle workers, takes chunks
// itself, and returns when every chunk is done.
func (st *fwRun) splitWork(n int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if !st.helping || n == 1 {
		f(0, n)
		return
	}
	var j *subJob
	for i := range st.subs {
		if st.subs[i].owned.CompareAndSwap(false, true) {
			j = &st.subs[i]
			break
		}
	}
	if j == nil {
		f(0, n)
		return
	}
	j.n, j.f, j.chunk = n, f, max(1, n/(4*st.workers))
	j.next.Store(0)
	j.open.Store(true)
	defer st.closeSub(j)
	for {
		lo := int(j.next.Add(int64(j.chunk))) - j.chunk
		if lo >= n {
			return
		}
		f(lo, min(lo+j.chunk, n))
	}
}

// closeSub closes job j, waits for its helpers, frees the slot and raises a
// helper's panic on the owner.
func (st *fwRun) closeSub(j *subJob) {
	j.open.Store(false)
	// The helpers are in the middle of a part, a few microseconds: watch
	// for them for a while, then park (on a machine whose cores are busy
	// with other work, spinning could keep a helper's thread from running).
	t0 := time.Now()
	for j.users.Load() != 0 && time.Since(t0) < subSpin {
		runtime.Gosched()
	}
	for j.users.Load() != 0 {
		<-j.wake
	}
	j.f = nil
	var p any
	if j.panicked.Load() {
		p = j.panicVal
		j.panicVal = nil
		j.panicked.Store(false)
	}
	j.owned.Store(false)
	if p != nil {
		panic(p)
	}
}

// helpSubs takes chunks of the open sub-jobs; it reports whether it did any.
func (st *fwRun) helpSubs() bool {
	did := false
	for i := range st.subs {
		j := &st.subs[i]
		if !j.open.Load() {
			continue
		}
		j.users.Add(1)
		if j.open.Load() && st.runSub(j) {
			did = true
		}
		if j.users.Add(-1) == 0 && !j.open.Load() {
			select {
			case j.wake <- struct{}{}:
			default: // a wake-up is pending already
			}
		}
	}
	return did
}

// runSub takes chunks of j until none is left; a panic of the problem's code
// is kept for the owner.
func (st *fwRun) runSub(j *subJob) (did bool) {
	defer func() {
		if p := recover(); p != nil {
			if j.panicked.CompareAndSwap(false, true) {
				j.panicVal = p
			}
		}
	}()
	n, chunk, f := j.n, j.chunk, j.f
	for {
		lo := int(j.next.Add(int64(chunk))) - chunk
		if lo >= n {
			return did
		}
		f(lo, min(lo+chunk, n))
		did = true
	}
}

// helpUntilDone is where a worker of a helping pass goes when no block is
// left: it takes parts of the running blocks until all of them are done, or
// until it has found no part for subSpin (then the blocks' owners finish
// alone, and the worker leaves the pass as it would without parts: a busy
// machine must not lose a core to a worker that waits).
func (st *fwRun) helpUntilDone() {
	t0 := time.Now()
	for st.left.Load() > 0 {
		if st.helpSubs() {
			t0 = time.Now()
		} else if time.Since(t0) >= subSpin {
			return
		} else {
			runtime.Gosched()
		}
	}
}

// subSpin is how long a worker waits for parts of a running block (or an
// owner for its helpers) before it stops watching.
const subSpin = 50 * time.Microsecond

// lmo is the oracle of a block step, split when the problem can.
func (st *fwRun) lmo(b int, g []float64) Vertex {
	if st.splitter != nil {
		return st.splitter.LMOSplit(b, g, st.subPar)
	}
	return st.m.p.LMO(b, g)
}

// scaleAdd and add tell the model of a block's move, x_b ← s·x_b + c·v and
// x_b ← x_b + c·v, split when it can (one pass over the block's state).
func (st *fwRun) scaleAdd(b int, s, c float64, v Vertex) {
	if st.splitMod != nil {
		st.splitMod.MoveSplit(b, s, c, v, st.subPar)
		return
	}
	st.model.Scale(b, s)
	st.model.Add(b, c, v)
}

func (st *fwRun) add(b int, c float64, v Vertex) {
	if st.splitMod != nil {
		st.splitMod.MoveSplit(b, 1, c, v, st.subPar)
		return
	}
	st.model.Add(b, c, v)
}
