package session

import (
	"runtime/debug"
)

// evictLocked drops the oldest finished runs beyond MaxStored.
func (m *Manager) evictLocked() {
	for len(m.order) > m.opts.MaxStored {
		idx := -1
		for i, r := range m.order {
			if r.Finished() {
				idx = i
				break
			}
		}
		if idx < 0 {
			return // every stored run is active; MaxStored ≥ MaxActive makes this rare
		}
		delete(m.runs, m.order[idx].ID)
		m.order = append(m.order[:idx], m.order[idx+1:]...)
	}
}

// holds returns the records a run is counted for: the budget of a run
// that may still run, the records made by a finished or a paused one (a
// paused run reserves only what it has made; Resume takes its budget back
// when it fits).
func (r *Run) holds() int {
	if r.Finished() {
		return r.stored()
	}
	r.mu.Lock()
	paused := r.paused
	r.mu.Unlock()
	if paused {
		return r.stored()
	}
	return r.budget
}

// heldLocked counts the records the stored runs hold or may still add: the
// budget of an active run, the stored records of a finished or paused one.
func (m *Manager) heldLocked() int {
	n := m.reserved
	for _, r := range m.order {
		n += r.holds()
	}
	return n
}

// makeRoomLocked evicts the oldest finished runs until budget more records
// fit within MaxTotalRecords; it reports whether they do.
func (m *Manager) makeRoomLocked(budget int) bool {
	active := m.reserved
	for _, r := range m.order {
		if !r.Finished() {
			active += r.holds()
		}
	}
	if active+budget > m.opts.MaxTotalRecords {
		return false // evicting finished runs would not help
	}
	for m.heldLocked()+budget > m.opts.MaxTotalRecords {
		if !m.evictOldestFinishedLocked() {
			return false
		}
	}
	return true
}

// evictOldestFinishedLocked forgets the oldest finished run kept in memory;
// it reports whether there was one.
func (m *Manager) evictOldestFinishedLocked() bool {
	for i, r := range m.order {
		if r.Finished() {
			delete(m.runs, r.ID)
			m.order = append(m.order[:i], m.order[i+1:]...)
			held, _ := r.heldBytes()
			m.giveBack(held)
			return true
		}
	}
	return false
}

// liveBytesLocked is the memory the stored runs are counted for: an
// unfinished run's instance and record budget, a finished run's records.
func (m *Manager) liveBytesLocked() int64 {
	n := m.reservedB
	for _, r := range m.order {
		n += r.holdsBytes()
	}
	return n
}

// holdsBytes is the memory a run is counted for: what its records really
// hold (measured, Trace.heldBytes), RecordBytes for each record an
// unfinished run may still add, and, while it is unfinished, its instance.
func (r *Run) holdsBytes() int64 {
	held, n := r.heldBytes()
	if r.Finished() {
		return held
	}
	return r.instBytes + held + int64(max(r.holds()-n, 0))*RecordBytes
}

// heldBytes returns the memory the run's records hold in memory and how
// many records it has made.
func (r *Run) heldBytes() (bytes int64, n int) {
	for _, t := range r.traces {
		b, k := t.heldBytes()
		bytes += b
		n += k
	}
	return bytes, n
}

// BaseMemory is the memory a server takes beside its MaxMemory budget: the
// Go runtime and the server's code, the pages and their buffers, the run
// store's cache, the chunks of records being filled (each live trace's
// records as made and as encoded: up to chunkSize, or with a run store up
// to its batch size and no more than its appender's interval makes) and
// the records on their way to the run store. The server's resident set stays within MaxMemory plus this.
const BaseMemory = 192 << 20

// GiveBackBytes is how much memory a run leaving memory must free before the
// manager hands the process's free memory back to the system.
const GiveBackBytes = 32 << 20

// giveBack returns the heap's free memory to the system after a run that
// held at least GiveBackBytes left memory: the garbage collector would
// otherwise run again (and the runtime return the pages) only once the
// program allocates again, which an idle server may not do for minutes, so
// its resident set would stay at its peak. One collection runs at a time,
// in the background; a run leaving meanwhile is covered by the next.
func (m *Manager) giveBack(freed int64) {
	if freed < GiveBackBytes {
		return
	}
	if m.givingBack.Add(1) > 1 {
		return // the running one goes round again
	}
	go func() {
		for {
			n := m.givingBack.Load()
			debug.FreeOSMemory()
			if m.givingBack.Add(-n) == 0 {
				return
			}
		}
	}()
}

// makeMemoryLocked evicts the oldest finished runs until bytes more fit
// within MaxMemory; it reports whether they do.
func (m *Manager) makeMemoryLocked(bytes int64) bool {
	active := m.reservedB
	for _, r := range m.order {
		if !r.Finished() {
			active += r.holdsBytes()
		}
	}
	if active+bytes > m.opts.MaxMemory {
		return false
	}
	for m.liveBytesLocked()+bytes > m.opts.MaxMemory {
		if !m.evictOldestFinishedLocked() {
			return false
		}
	}
	return true
}
