package store

import "time"

// WorkerBeat is what the pages show of the worker of a live run taken from
// a shared queue (the PostgreSQL store): how long ago it last beat, judged
// on the database's clock (the worker's and the server's own clocks play
// no part), and whether that is long enough to call it silent.
type WorkerBeat struct {
	// Age is the time since the worker's last heartbeat, in seconds.
	Age float64 `json:"age_s"`
	// Silent says that Age is over SilentAfter: the worker missed a few
	// heartbeats (it died, froze or lost the database).
	Silent bool `json:"silent"`
	// RescueIn is the time, in seconds, until the run is given back to
	// the queue if its worker stays silent (the server's -rescue-after
	// less Age, never below 0); absent when the server does not know.
	RescueIn *float64 `json:"rescue_in_s,omitempty"`
}

// BeatEvery is how often a worker beats for each run it runs.
const BeatEvery = 2 * time.Second

// SilentAfter is how long a worker may stay without a heartbeat before the
// pages call it silent: three heartbeats.
const SilentAfter = 3 * BeatEvery

// NewWorkerBeat describes a heartbeat age old; rescueAfter (0: unknown) is
// the rescue delay of the queue.
func NewWorkerBeat(age, rescueAfter time.Duration) WorkerBeat {
	b := WorkerBeat{Age: age.Seconds(), Silent: age > SilentAfter}
	if rescueAfter > 0 {
		in := max(rescueAfter-age, 0).Seconds()
		b.RescueIn = &in
	}
	return b
}
