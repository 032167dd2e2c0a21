package live

import "time"

// SenderCost returns how long Record waited for the dashboard and how long
// the sender spent encoding batches (for the benchmark).
func SenderCost(r *Run) (waited, encoded time.Duration) {
	return time.Duration(r.waited.Load()), time.Duration(r.encoded.Load())
}

// Encode encodes n copies of rec as one batch of trace 0, for a benchmark.
func Encode(r *Run, items []Item) int {
	b, _ := r.encode(nil, items)
	return len(b)
}

// Item is a queued record.
type Item = item
