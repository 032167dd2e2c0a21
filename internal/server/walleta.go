package server

import (
	"sync"
	"time"
)

// History's time left is measured on the wall clock, as the run page's
// (web/static/js/progress.js wallEta): the rate of a run's progress over
// the last wallWindow of wall time, "measuring" (null) until its samples
// span wallMinSpan and wallMinProgress of the run. A trace's own seconds
// count only its work, not the time it waited for a worker or a core, so
// they cannot say when the run will end. The server samples a run's
// progress each time it computes it for History (the page asks every 3 s
// while a run is live).
const (
	wallWindow      = 20 * time.Second
	wallMinSpan     = 3 * time.Second
	wallMinProgress = 0.02
)

// progressSample is a run's progress fraction at a moment.
type progressSample struct {
	t time.Time
	f float64
}

// wallClock keeps the recent progress samples of each live run.
type wallClock struct {
	mu     sync.Mutex
	runs   map[string][]progressSample
	pruned time.Time
}

// timeLeft records that run id is at fraction f at now and returns its
// time left in seconds by the rule of wallEta (nil while measuring).
func (w *wallClock) timeLeft(id string, now time.Time, f float64) *float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs == nil {
		w.runs = map[string][]progressSample{}
	}
	// a run no longer asked about (ended, deleted) is forgotten
	if now.Sub(w.pruned) > wallWindow {
		for k, s := range w.runs {
			if now.Sub(s[len(s)-1].t) > 2*wallWindow {
				delete(w.runs, k)
			}
		}
		w.pruned = now
	}
	s := w.runs[id]
	if n := len(s); n > 0 && (f < s[n-1].f || now.Before(s[n-1].t)) {
		s = nil // progress went back (a run made again): measure anew
	}
	s = append(s, progressSample{now, f})
	i := 0
	for i < len(s)-2 && now.Sub(s[i+1].t) >= wallWindow {
		i++
	}
	s = append(s[:0], s[i:]...)
	w.runs[id] = s
	if f >= 1 {
		zero := 0.0
		return &zero
	}
	dt, df := now.Sub(s[0].t), f-s[0].f
	if dt < wallMinSpan || df < wallMinProgress {
		return nil
	}
	eta := (1 - f) * dt.Seconds() / df
	return &eta
}
