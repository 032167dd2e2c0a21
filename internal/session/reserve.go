package session

import (
	"fmt"
	"sync"
)

// Reserve counts bytes of memory that work outside the runs holds (an
// import streaming into the store) in the MaxMemory budget, evicting
// finished runs to make room, until the returned release is called (once;
// later calls do nothing). It fails with ErrBusy, naming the budget and its
// flag, when the unfinished runs and other reservations leave no room.
func (m *Manager) Reserve(bytes int64, what string) (release func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.makeMemoryLocked(bytes) {
		return nil, fmt.Errorf("%w: the runs in progress hold %s of the server's memory budget of %s%s and %s needs about %s more; wait until one finishes",
			ErrBusy, mib(m.liveBytesLocked()), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"), what, mib(bytes))
	}
	m.reservedB += bytes
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			m.reservedB -= bytes
			m.mu.Unlock()
		})
	}, nil
}
