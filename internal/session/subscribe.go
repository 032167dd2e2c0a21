package session

// Subscription delivers change notifications of one run: C receives a value
// (coalesced; never blocking the sender) whenever records were added or the
// status changed.
type Subscription struct {
	C   <-chan struct{}
	c   chan struct{}
	run *Run
}

// Subscribe registers a subscriber; call Close when done.
func (r *Run) Subscribe() *Subscription {
	c := make(chan struct{}, 1)
	s := &Subscription{C: c, c: c, run: r}
	r.hubMu.Lock()
	var next []*Subscription
	if old := r.subs.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, s)
	r.subs.Store(&next)
	r.hubMu.Unlock()
	return s
}

// Close unregisters the subscriber.
func (s *Subscription) Close() {
	r := s.run
	r.hubMu.Lock()
	var next []*Subscription
	if old := r.subs.Load(); old != nil {
		for _, o := range *old {
			if o != s {
				next = append(next, o)
			}
		}
	}
	r.subs.Store(&next)
	r.hubMu.Unlock()
}

// notify wakes every subscriber without blocking. It runs once per record,
// so it takes no lock and skips a subscriber already notified.
func (r *Run) notify() {
	subs := r.subs.Load()
	if subs == nil {
		return
	}
	for _, s := range *subs {
		if len(s.c) > 0 {
			continue
		}
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}
