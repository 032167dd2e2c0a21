package live

import "time"

// SenderCost returns how long Record waited for the dashboard and how long
// the sender spent encoding batches (for the benchmark).
func SenderCost(r *Run) (waited, encoded time.Duration) {
	return time.Duration(r.waited.Load()), time.Duration(r.encoded.Load())
}
