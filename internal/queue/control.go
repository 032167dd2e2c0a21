package queue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// gate holds a worker's run at its records while the run is paused in the
// store, as a session's trace gate does on one machine (internal/session):
// the record that meets the pause is stored, then the trace waits; each
// step granted lets it make one more record (evaluated: the method is
// asked for F and the gap of the stepped iteration) and wait again; a
// resume lets it run freely. The run's traces run one after the other on
// a worker, so a step is one more record of the trace running.
type gate struct {
	held atomic.Bool // paused: the recorder goes through wait

	mu      sync.Mutex
	paused  bool
	granted int64         // steps granted since the claim (the store's count)
	used    int64         // steps taken
	wake    chan struct{} // closed and replaced at each change
	eval    atomic.Bool   // the next iteration was let through by a step
}

func newGate() *gate { return &gate{wake: make(chan struct{})} }

// set takes the run's control as read from the store: a resume drops the
// steps not taken yet (as on one machine).
func (g *gate) set(c pgstore.RunControl) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paused = c.Status == store.StatusPaused
	g.granted = c.Steps
	if !g.paused {
		g.used = g.granted
	}
	g.held.Store(g.paused)
	close(g.wake)
	g.wake = make(chan struct{})
}

// wait blocks while the run is paused and no step is left, until ctx
// ends.
func (g *gate) wait(ctx context.Context) {
	g.mu.Lock()
	for {
		if ctx.Err() != nil || !g.paused {
			g.mu.Unlock()
			return
		}
		if g.used < g.granted {
			g.used++
			g.eval.Store(true)
			g.mu.Unlock()
			return
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		g.mu.Lock()
	}
}

// recorder is a trace's Recorder on a worker: it hands each record to the
// streamer, then waits at the gate while the run is paused.
type recorder struct {
	ctx  context.Context
	g    *gate
	emit func(solver.Record)
}

func (r recorder) Record(rec solver.Record) {
	r.emit(rec)
	if r.g.held.Load() {
		r.g.wait(r.ctx)
	}
}

// EvalNext reports (once) that the iteration being computed was let
// through by a step (solver.EvalRequester).
func (r recorder) EvalNext() bool { return r.g.eval.Load() && r.g.eval.Swap(false) }

// errPauseTimeout ends a run paused for longer than its pause timeout.
type errPauseTimeout struct{ c pgstore.RunControl }

func (e errPauseTimeout) Error() string {
	return fmt.Sprintf("cancelled: paused for longer than the pause timeout of %v (-pause-timeout of the server that paused it)", e.c.PauseTimeout)
}
