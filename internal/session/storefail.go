package session

import (
	"fmt"
	"log/slog"

	"github.com/fwlab/fwlab/internal/solver"
)

// A run whose records the store refuses (no space, I/O error, read-only
// file) ends failed at once: its traces stop, its status is failed and its
// message names the store's file and the cause. It never reports done, and
// the store keeps the records it took (a whole prefix of each trace), which
// is what the run reports once it is read back.

// storeFailed records a write failure of the run's store and stops the
// run (the appender calls it from its writing goroutine).
func (r *Run) storeFailed(err error) {
	if r.noteStoreErr(err) {
		slog.Error("run store write failed; the run ends failed", "run", r.ID, "store", r.m.st.Path(), "err", err)
	}
	r.Cancel()
}

// noteStoreErr keeps the first store failure and its message; it reports
// whether err was the first.
func (r *Run) noteStoreErr(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.storeErr != nil {
		return false
	}
	r.storeErr = err
	r.reason = fmt.Sprintf("failed: the run store %s could not write: %v", r.m.st.Path(), err)
	return true
}

// storeFailure returns the run's store failure and its message, if any.
func (r *Run) storeFailure() (error, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.storeErr, r.reason
}

// failedByStore turns the summary of a trace stopped by a store failure
// into a failure naming it.
func failedByStore(sum solver.Summary, msg string) solver.Summary {
	sum.Status = solver.StatusFailed
	sum.Message = msg
	return sum
}
