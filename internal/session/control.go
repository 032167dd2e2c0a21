package session

import (
	"fmt"
	"time"
)

// changed marks a change of the run's status (queued, started, paused,
// resumed, stepped, cancelled, a trace finished): subscribers are told.
func (r *Run) changed() {
	r.version.Add(1)
	r.notify()
	r.m.markDirty(r)
}

// launchLocked starts the traces' goroutines, once (the manager's lock and
// r.mu held).
func (r *Run) launchLocked() {
	if r.started {
		return
	}
	r.started = true
	r.m.wg.Add(len(r.traces))
	for i, t := range r.traces {
		go t.execute(r.methods[i])
	}
	r.methods = nil
}

// armPauseTimerLocked (re)starts the pause timeout (r.mu held).
func (r *Run) armPauseTimerLocked() {
	if r.pauseTimer != nil {
		r.pauseTimer.Stop()
	}
	r.pauseEpoch++
	epoch := r.pauseEpoch
	d := r.m.opts.PauseTimeout
	r.pauseTimer = time.AfterFunc(d, func() {
		r.mu.Lock()
		expired := r.paused && r.pauseEpoch == epoch && r.running > 0
		if expired {
			r.reason = fmt.Sprintf("cancelled: paused for longer than the pause timeout of %v%s", d, r.m.opts.flag("PauseTimeout"))
		}
		r.mu.Unlock()
		if expired {
			r.Cancel()
		}
	})
}

func (r *Run) stopPauseTimerLocked() {
	if r.pauseTimer != nil {
		r.pauseTimer.Stop()
		r.pauseTimer = nil
	}
	r.pauseEpoch++
}

func (r *Run) stopPauseTimer() {
	r.mu.Lock()
	r.stopPauseTimerLocked()
	r.mu.Unlock()
}

// releaseRunSlotLocked gives the run slot back (the manager's lock and r.mu
// held); the caller dispatches the queue.
func (r *Run) releaseRunSlotLocked() {
	if r.slot {
		r.slot = false
		r.m.running--
	}
}

// Cancel stops every trace of the run (a queued run leaves the queue). It
// does nothing to a finished run.
func (r *Run) Cancel() {
	m := r.m
	m.mu.Lock()
	r.mu.Lock()
	if r.running > 0 && !r.cancelled {
		r.cancelled = true
		m.dequeueLocked(r)
		r.stopPauseTimerLocked()
		// The context ends before a run never started is launched, so that
		// its traces stop before their first record.
		r.cancel()
		r.launchLocked()
	}
	r.mu.Unlock()
	m.mu.Unlock()
	r.cancel()
	r.changed()
}

// pauseLocked pauses the run: it leaves the queue or gives its run slot
// back, its traces stop at their next record, and the pause timeout starts
// (the manager's lock and r.mu held; the caller dispatches the queue). A
// queued run never started is launched: its traces stop at their first
// record.
func (r *Run) pauseLocked() {
	r.paused = true
	r.holdFast.Store(true)
	r.m.dequeueLocked(r)
	r.releaseRunSlotLocked()
	r.launchLocked()
	r.armPauseTimerLocked()
}

// Pause stops every trace of the run at its next record and gives the run
// slot back; a run paused for longer than the pause timeout is cancelled.
// A run opened from outside holds no slot and is left as it is.
func (r *Run) Pause() {
	if r.outside != nil {
		return // its records come from outside: nothing to hold
	}
	m := r.m
	m.mu.Lock()
	r.mu.Lock()
	if r.running > 0 && !r.paused && r.ctx.Err() == nil {
		r.pauseLocked()
	}
	r.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
}

// Resume lets every trace run freely again once the run has a run slot: it
// joins the queue ahead of the runs never started, and runs at once when a
// slot is free. A paused run reserves only the records it has made, so
// Resume takes the rest of its record budget back first: when that does not
// fit beside the other runs, it fails with ErrBusy (wrapped) and the run
// stays paused.
func (r *Run) Resume() error {
	m := r.m
	m.mu.Lock()
	if err := m.reclaimLocked(r); err != nil {
		m.mu.Unlock()
		return err
	}
	r.mu.Lock()
	if r.paused {
		r.paused = false
		r.stopPauseTimerLocked()
		for _, t := range r.traces {
			t.tokens = 0
			t.waiting = false
			t.stepping = false
		}
		if !r.slot && r.running > 0 && r.ctx.Err() == nil && !r.queued {
			i := 0
			for i < len(m.queue) && m.queue[i].started {
				i++
			}
			m.queue = append(m.queue, nil)
			copy(m.queue[i+1:], m.queue[i:])
			m.queue[i] = r
			r.queued = true
		}
		r.holdFast.Store(!r.slot)
		r.openGateLocked()
	}
	r.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
	return nil
}

// reclaimLocked checks that a paused run's remaining records (its budget
// less what it has made) fit in the record and memory budgets again,
// evicting finished runs to make room (m.mu held).
func (m *Manager) reclaimLocked(r *Run) error {
	r.mu.Lock()
	paused := r.paused && r.running > 0 && r.ctx.Err() == nil
	r.mu.Unlock()
	if !paused {
		return nil
	}
	more := r.budget - r.stored()
	if more <= 0 {
		return nil
	}
	if !m.makeRoomLocked(more) {
		return fmt.Errorf("%w: resuming needs room for the run's %d remaining records, and the runs in progress leave too few of the %d records allowed in all%s; cancel one or wait until one finishes",
			ErrBusy, more, m.opts.MaxTotalRecords, m.opts.flag("MaxTotalRecords"))
	}
	if bytes := int64(more) * RecordBytes; !m.makeMemoryLocked(bytes) {
		return fmt.Errorf("%w: resuming needs about %s for the run's %d remaining records, and the runs in progress hold %s of the server's memory budget of %s%s; cancel one or wait until one finishes",
			ErrBusy, mib(bytes), more, mib(m.liveBytesLocked()), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	return nil
}

// Step lets each trace stopped at the pause emit exactly one more record,
// after which it stops again; steps requested while a trace is taking one
// add up. A trace that has not reached the pause yet (it was running when
// the pause came, or is waiting for a worker slot) stops at its next record,
// so stepping a running run pauses it after one more record from each trace.
// A paused run reserves only the records it has made, so a step first
// checks that one more record per trace fits: when it does not, Step fails
// with ErrBusy (wrapped) and the run stays as it is.
func (r *Run) Step() error {
	if r.outside != nil {
		return fmt.Errorf("run %s: %w: it cannot be stepped", r.ID, ErrNotPausable)
	}
	m := r.m
	m.mu.Lock()
	if err := m.stepRoomLocked(r); err != nil {
		m.mu.Unlock()
		return err
	}
	r.mu.Lock()
	if r.running > 0 && r.ctx.Err() == nil {
		if !r.paused {
			r.pauseLocked()
		} else {
			r.armPauseTimerLocked() // a step is activity: the timeout restarts
		}
		for _, t := range r.traces {
			// Only a trace that has stopped at the pause (or is taking a
			// step) gets a step; the others stop at their next record.
			if t.waiting || t.stepping || t.tokens > 0 {
				t.tokens++
				t.waiting = false
			}
		}
		r.openGateLocked()
	}
	r.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
	return nil
}

// stepRoomLocked checks that a paused run's next step (a record per trace)
// fits in the record and memory budgets (m.mu held).
func (m *Manager) stepRoomLocked(r *Run) error {
	r.mu.Lock()
	paused := r.paused && r.running > 0 && r.ctx.Err() == nil
	r.mu.Unlock()
	if !paused {
		return nil
	}
	more := min(len(r.traces), max(r.budget-r.stored(), 0))
	if more == 0 {
		return nil
	}
	if !m.makeRoomLocked(more) {
		return fmt.Errorf("%w: a step adds a record to each of the run's %d traces, and the runs in progress leave too few of the %d records allowed in all%s; cancel one or wait until one finishes",
			ErrBusy, more, m.opts.MaxTotalRecords, m.opts.flag("MaxTotalRecords"))
	}
	if !m.makeMemoryLocked(int64(more) * RecordBytes) {
		return fmt.Errorf("%w: a step adds a record to each of the run's %d traces, and the runs in progress hold %s of the server's memory budget of %s%s; cancel one or wait until one finishes",
			ErrBusy, more, mib(m.liveBytesLocked()), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	return nil
}

// Parked reports whether the run is paused and every unfinished trace is
// waiting at the pause (so that no record will arrive until a step, resume or
// cancel).
func (r *Run) Parked() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.paused || r.running == 0 {
		return false
	}
	for _, t := range r.traces {
		if !t.waiting && t.Status() == StatusRunning {
			return false
		}
	}
	return true
}

func (r *Run) openGateLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
}
