package pgstore

import "testing"

func TestWorkerName(t *testing.T) {
	for _, c := range []struct{ claim, want string }{
		{"w0/12/1", "w0"},
		{"lab/host-3/7/2", "lab/host-3"},
		{"direct/5", "direct/5"}, // not a queue's claim: shown whole
		{"solo", "solo"},
	} {
		if got := WorkerName(c.claim); got != c.want {
			t.Errorf("WorkerName(%q) = %q, want %q", c.claim, got, c.want)
		}
	}
}
