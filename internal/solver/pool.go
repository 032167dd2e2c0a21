package solver

import (
	"fmt"
	"runtime"
	"time"
)

// forChosen runs f on every chosen block, on up to workers goroutines that
// take the blocks in contiguous chunks (no synchronisation per block, so many
// small blocks pay too). f only writes its own block's state, so the result
// does not depend on the scheduling. With few blocks per worker and a problem
// that splits its work (split.go), a worker that finds no block left takes
// parts of the blocks still running, so that 5 blocks on 2 workers take
// about 2.5 blocks' time, not 3. A panic in a problem's code on a worker
// goroutine would end the process: it is reported as that block's failure
// (plan.err), which fails the run with its message.
func (st *fwRun) forChosen(workers int, f func(bs *blockState)) {
	if f == nil {
		return // nothing to run (phase 2 of separable blocks)
	}
	n := len(st.chosen)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(st.bs[st.chosen[i]])
		}
		return
	}
	st.chunk = max(1, n/(4*workers))
	st.next.Store(0)
	st.step = f
	st.helping = st.splitHelps(n, workers)
	st.left.Store(int64(n))
	st.dispatch(workers-1, st.chunksJob)
	st.helping = false
}

// dispatch runs job on the calling goroutine and on up to helpers helpers of
// the pool (started on first use, they live as long as the run: Run closes
// the pool), and returns when the work is done. job takes its work from
// shared counters, so it does not matter which goroutine, or how many, run
// it. A helper that has not started by the time the caller's job runs out
// of work is not waited for: on a loaded machine its thread may not get a
// CPU for milliseconds, and it then finds the dispatch closed and skips it.
func (st *fwRun) dispatch(helpers int, job func()) {
	if st.pool == nil {
		st.helpers = st.workers - 1
		st.pool = make(chan struct{}, st.helpers)
		st.idle = make(chan struct{}, 1)
		st.subs = make([]subJob, st.workers)
		for i := range st.subs {
			st.subs[i].wake = make(chan struct{}, 1)
		}
		for w := 0; w < st.helpers; w++ {
			go st.helper()
		}
	}
	st.job = job
	st.epoch.Add(1) // open (odd)
	for w := 0; w < min(helpers, st.helpers); w++ {
		select {
		case st.pool <- struct{}{}:
		default: // a helper has a wake-up pending already
		}
	}
	job()
	st.epoch.Add(1) // closed (even): no helper starts job any more
	for st.active.Load() != 0 {
		<-st.idle
	}
}

// helper is a pool goroutine: it joins every dispatch it finds open. Between
// dispatches it watches for the next one for a short while (helperSpin)
// before it parks until woken: the phases of an iteration follow each other
// within microseconds, and waking a parked goroutine's thread can take
// longer than a small block step. While it is active the caller does not
// return from dispatch, so job stays the open dispatch's.
func (st *fwRun) helper() {
	var joined uint64
	for {
		e := st.epoch.Load()
		if e&1 == 1 && e != joined {
			joined = e
			st.active.Add(1)
			if st.epoch.Load() == e {
				st.job()
			}
			if st.active.Add(-1) == 0 {
				select {
				case st.idle <- struct{}{}:
				default:
				}
			}
			continue
		}
		t0 := time.Now()
		for st.epoch.Load() == e && time.Since(t0) < helperSpin {
			runtime.Gosched()
		}
		if st.epoch.Load() != e {
			continue
		}
		if _, ok := <-st.pool; !ok {
			return
		}
	}
}

// helperSpin is how long a pool helper watches for the next dispatch before
// it parks.
const helperSpin = 50 * time.Microsecond

// parallel runs f on ranges that cover [0, n), on the run's workers (see
// SyncModel).
func (st *fwRun) parallel(n int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := min(st.workers, n)
	st.rangeN, st.rangeF = n, f
	st.chunk = max(1, n/(4*workers))
	st.next.Store(0)
	if workers <= 1 {
		st.chunk = max(1, n)
		st.runRanges()
	} else {
		st.dispatch(workers-1, st.rangeJob)
	}
	st.rangeF = nil
}

// runRanges runs the current range job on chunks until none is left; a
// panic in the problem's code on a helper would end the process, so it is
// kept (the first one) and reported by syncModel.
func (st *fwRun) runRanges() {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("panic: %v", p)
			st.rangeErr.CompareAndSwap(nil, &msg)
		}
	}()
	n, chunk := st.rangeN, st.chunk
	for {
		lo := int(st.next.Add(int64(chunk))) - chunk
		if lo >= n {
			return
		}
		st.rangeF(lo, min(lo+chunk, n))
	}
}

// syncModel lets a SyncModel apply its deferred updates before the blocks
// read it concurrently.
func (st *fwRun) syncModel() (err error) {
	if st.syncer == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("model update: panic: %v", p)
		}
	}()
	st.syncer.Sync(st.parallelFn)
	if msg := st.rangeErr.Swap(nil); msg != nil {
		return fmt.Errorf("model update: %s", *msg)
	}
	return nil
}

// runChunks runs f on chunks of the chosen blocks until none is left; in a
// helping pass it then takes parts of the blocks still running until all
// are done (see splitWork).
func (st *fwRun) runChunks() {
	n, chunk, f := len(st.chosen), st.chunk, st.step
	for {
		lo := int(st.next.Add(int64(chunk))) - chunk
		if lo >= n {
			break
		}
		for i := lo; i < min(lo+chunk, n); i++ {
			st.guarded(st.bs[st.chosen[i]], f)
			st.left.Add(-1)
		}
	}
	if st.helping {
		st.helpUntilDone()
	}
}

// guarded runs f on bs on a worker goroutine, where a panic in a problem's
// code would end the process: it becomes the block's failure instead.
func (st *fwRun) guarded(bs *blockState, f func(bs *blockState)) {
	defer func() {
		if p := recover(); p != nil {
			bs.plan = stepPlan{kind: StepNone, u: -1, err: fmt.Errorf("iteration %d, block %d: panic: %v", st.k, bs.idx, p)}
		}
	}()
	f(bs)
}
