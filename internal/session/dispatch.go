package session

import (
	"sort"
)

// dispatchLocked gives free run slots to the queued runs in the order of
// queueOrderLocked: resumed runs first, then round-robin across clients.
func (m *Manager) dispatchLocked() {
	for m.running < m.opts.MaxActive && len(m.queue) > 0 {
		i := m.nextLocked()
		m.startQueuedLocked(m.queue[i], i)
	}
	m.lendLocked()
}

// startQueuedLocked gives a free run slot to the queued run r (at queue
// index i).
func (m *Manager) startQueuedLocked(r *Run, i int) {
	m.queue = append(m.queue[:i], m.queue[i+1:]...)
	m.tick++
	m.served[r.client] = m.tick
	m.pruneServedLocked()
	r.mu.Lock()
	r.queued = false
	r.lentTo = ""
	if r.ctx.Err() == nil && r.running > 0 {
		r.slot = true
		r.slotTick = m.tick
		m.running++
		r.holdFast.Store(r.paused)
		r.launchLocked()
		r.openGateLocked()
	}
	r.mu.Unlock()
	r.changed()
}

// lendLocked lends run slots so that a client's first run never waits for
// another client's long runs: while every run slot is held and a queued run
// (never started) belongs to a client that holds none, the client holding
// the most slots (at least two) lends one: its run that has held its slot
// longest gives it to that queued run and waits at the head of the queue,
// as a resumed run does, so that it goes on at the next free slot (at the
// latest when the borrower ends). Its records, and its result, are those
// it would have made without the pause (runs are pure functions of their
// spec, ARCHITECTURE.md, "Records").
func (m *Manager) lendLocked() {
	for m.running >= m.opts.MaxActive && len(m.queue) > 0 {
		held := map[string]int{}
		for _, r := range m.order {
			if r.slot {
				held[r.client]++
			}
		}
		waits := false // a queued run of a client holding no slot
		for _, q := range m.queue {
			if !q.started && held[q.client] == 0 {
				waits = true
				break
			}
		}
		if !waits {
			return
		}
		var borrower *Run
		for _, q := range m.queueOrderLocked() {
			if !q.started && held[q.client] == 0 && q.ctx.Err() == nil {
				borrower = q
				break
			}
		}
		var lender *Run
		for _, r := range m.order {
			if !r.slot || held[r.client] < 2 {
				continue
			}
			if lender == nil || held[r.client] > held[lender.client] ||
				(held[r.client] == held[lender.client] && r.slotTick < lender.slotTick) {
				lender = r
			}
		}
		if borrower == nil || lender == nil {
			return
		}
		lender.mu.Lock()
		lender.releaseRunSlotLocked()
		lender.holdFast.Store(true)
		lender.lentTo = borrower.ID
		i := 0
		for i < len(m.queue) && m.queue[i].started {
			i++
		}
		m.queue = append(m.queue, nil)
		copy(m.queue[i+1:], m.queue[i:])
		m.queue[i] = lender
		lender.queued = true
		lender.mu.Unlock()
		lender.changed()
		for j, q := range m.queue {
			if q == borrower {
				m.startQueuedLocked(borrower, j)
				break
			}
		}
	}
}

// nextLocked returns the queue index of the run to start next: the first
// resumed run (it ran before), else the first run of the client served
// longest ago (a client never served first), so that runs are taken
// round-robin across clients and a client's many runs never delay another
// client's first.
func (m *Manager) nextLocked() int {
	best, stamp := -1, uint64(0)
	for i, r := range m.queue {
		if r.started {
			return i
		}
		if st := m.served[r.client]; best < 0 || st < stamp {
			best, stamp = i, st
		}
	}
	return best
}

// queueOrderLocked returns the queued runs in the order they will start
// (when nothing else changes): resumed runs first, then one run of each
// client in turn, the clients served longest ago first.
func (m *Manager) queueOrderLocked() []*Run {
	order := make([]*Run, 0, len(m.queue))
	byClient := map[string][]*Run{}
	var clients []string
	for _, r := range m.queue {
		if r.started {
			order = append(order, r)
			continue
		}
		if _, ok := byClient[r.client]; !ok {
			clients = append(clients, r.client)
		}
		byClient[r.client] = append(byClient[r.client], r)
	}
	// Stable: clients served equally long ago keep their queue order.
	sort.SliceStable(clients, func(a, b int) bool { return m.served[clients[a]] < m.served[clients[b]] })
	for round := 0; len(order) < len(m.queue); round++ {
		for _, c := range clients {
			if runs := byClient[c]; round < len(runs) {
				order = append(order, runs[round])
			}
		}
	}
	return order
}

// pruneServedLocked forgets when clients with nothing queued were served,
// once many are remembered.
func (m *Manager) pruneServedLocked() {
	if len(m.served) <= maxServed {
		return
	}
	queued := map[string]bool{}
	for _, r := range m.queue {
		queued[r.client] = true
	}
	for c := range m.served {
		if !queued[c] {
			delete(m.served, c)
		}
	}
}

// maxServed bounds the clients whose last service the queue remembers
// beyond those with runs queued.
const maxServed = 4096

// dequeueLocked removes r from the queue (m.mu and r.mu held).
func (m *Manager) dequeueLocked(r *Run) {
	if !r.queued {
		return
	}
	r.queued = false
	for i, q := range m.queue {
		if q == r {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			return
		}
	}
}

// QueuePosition returns r's place in the queue (1: next to start), or 0
// when it is not queued.
func (m *Manager) QueuePosition(r *Run) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !r.queued {
		return 0
	}
	for i, q := range m.queueOrderLocked() {
		if q == r {
			return i + 1
		}
	}
	return 0
}
