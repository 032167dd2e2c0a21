// Package storetest is the conformance suite of store.Backend: one set of
// checks that every implementation of the run store passes, run against
// the SQLite store (internal/store) and the PostgreSQL one
// (internal/store/pgstore) on real databases. It covers every behaviour
// the layers above the store rely on: runs and their traces, records in
// batches (bit-exact), summaries and panels, status changes, names, notes
// and stars, history filters, search and pages, delete and keep (Trim),
// sweeps, and runs streaming in (imports, one run per content digest).
//
// An implementation's test calls Run with an Opener that gives a fresh,
// empty store for each check.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// Opener returns a new, empty store; the test's cleanup closes it.
type Opener func(t *testing.T) store.Backend

// Check is one behaviour of the store. A Bulk check is one goroutine's
// many writes and reads through the store, with no goroutine of its own
// beside them: a backend whose driver the race detector slows tenfold
// (SQLite's, translated from C) may run it apart from the detector
// (RunChecks), as make test does.
type Check struct {
	Name string
	Fn   func(t *testing.T, s store.Backend)
	Bulk bool
}

// Checks lists the suite's checks.
var Checks = []Check{
	{Name: "RunLifecycle", Fn: checkRunLifecycle},
	{Name: "PutRunValidates", Fn: checkPutRunValidates},
	{Name: "RecordsBitExactAndRanges", Fn: checkRecords},
	{Name: "RecordsLargeBatches", Fn: checkLargeBatches},
	{Name: "EachRecordStopsOnError", Fn: checkEachRecord},
	{Name: "StatusReachesLiveTracesOnly", Fn: checkStatus},
	{Name: "MessageAndInstance", Fn: checkMessageAndInstance},
	{Name: "EndRunIsOneWrite", Fn: checkEndRun},
	{Name: "EditsAndUser", Fn: checkEdits},
	{Name: "DefaultNames", Fn: checkDefaultNames},
	{Name: "ImportNames", Fn: checkImportNames},
	{Name: "UploadNames", Fn: checkUploadNames},
	{Name: "ListFiltersSearchAndPages", Fn: checkList},
	{Name: "KeysetPagesOnceInOrder", Fn: checkKeyset, Bulk: true},
	{Name: "Delete", Fn: checkDelete},
	{Name: "Verifications", Fn: checkVerifications},
	{Name: "TrimKeepsNewestStarredAndLive", Fn: checkTrim},
	{Name: "Sweeps", Fn: checkSweeps},
	{Name: "SweepsListAndValidate", Fn: checkSweepsList},
	{Name: "SweepEditsCellsOfAndFilter", Fn: checkSweepEdits},
	{Name: "ConcurrentWritersAndReaders", Fn: checkConcurrent},
	{Name: "IntegrityAndDiskUsage", Fn: checkIntegrity},
	{Name: "AppenderStreamsInBatches", Fn: checkAppender},
	{Name: "AppenderTakesEncodedBatches", Fn: checkAppenderBatches},
	{Name: "ImportsStreamInvisiblyOncePerDigest", Fn: checkImports},
	{Name: "UnreadableValuesRefused", Fn: checkUnreadableValues},
	{Name: "TrimSparesRunsBeingRead", Fn: checkTrimReading},
	{Name: "LeanGetAndTracePanels", Fn: checkTracePanels},
	{Name: "OutsideRunsMarked", Fn: checkOutside},
}

// Clock makes a store read the time from f until restore is called
// (store.SetClock, pgstore.SetClock); nil skips the checks that need it.
type Clock func(f func() time.Time) (restore func())

// clock is the Clock of the store being checked.
var clock Clock

// Run runs every check as a subtest, each on a store of its own; clock
// sets the store's clock.
func Run(t *testing.T, open Opener, c Clock) {
	RunChecks(t, open, c, func(Check) bool { return true })
}

// RunChecks runs the checks that which selects, as Run does.
func RunChecks(t *testing.T, open Opener, c Clock, which func(Check) bool) {
	clock = c
	defer func() { clock = nil }()
	for _, c := range Checks {
		if !which(c) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			c.Fn(t, open(t))
		})
	}
}

// TestRun is a run of problem with one trace per algorithm, status running.
func TestRun(problem string, algos ...string) *store.Run {
	r := &store.Run{
		Spec:     spec.Run{Problem: problem, Replications: 1, Seed: 7, Iters: 100},
		Instance: store.Instance{Dim: 3, Samples: 20, Blocks: 1, FStar: solver.F(0.25)},
		Version:  "test",
		Status:   store.StatusRunning,
	}
	for i, a := range algos {
		r.Spec.Algorithms = append(r.Spec.Algorithms, spec.Algo{Algo: a})
		r.Traces = append(r.Traces, store.Trace{Index: i, Algo: a, Replication: 0, Seed: 7 + int64(i)})
	}
	return r
}

func put(t *testing.T, s store.Backend, r *store.Run) string {
	t.Helper()
	id, err := s.PutRun(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func fieldErr(err error, field string) bool {
	var fe *spec.FieldError
	return errors.As(err, &fe) && fe.Field == field
}
