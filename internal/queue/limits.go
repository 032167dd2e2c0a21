package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// Per-client limits.
//
// A server that queues the runs and sweeps started through it bounds what
// each client may have live at once, as a server running them itself does
// (its -max-client-runs and -max-sweeps): From.MaxRuns live runs queued by
// SubmitFor (queued, running or paused; a sweep's cells do not count) and
// From.MaxSweeps live sweeps queued by SubmitSweepFor. The client of each
// job is in its arguments (RunArgs.Client), so the count is the store's,
// whichever server or process queued them: the live runs (sweeps) with a
// job of the client's. It is taken in the transaction that inserts the
// job, under the lock that orders the jobs (fair.go), so two requests at
// once cannot both pass; a run (sweep) refused there is deleted again. A
// first count before anything is stored refuses most requests cheaply.

// ErrClientLimit is returned (wrapped in a *LimitError) when a client has
// as many live runs or sweeps as it may.
var ErrClientLimit = errors.New("the client's limit is reached")

// LimitError says which limit refused a run or a sweep.
type LimitError struct {
	Client string
	Sweeps bool // the sweeps' limit (else the runs')
	Max    int
}

func (e *LimitError) Error() string {
	what := "runs queued, running or paused"
	if e.Sweeps {
		what = "sweeps queued or running"
	}
	return fmt.Sprintf("%v: client %q has %d %s, at most %d are allowed", ErrClientLimit, e.Client, e.Max, what, e.Max)
}

func (e *LimitError) Unwrap() error { return ErrClientLimit }

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// liveRunsSQL counts the live runs (not sweep cells) with a job of client
// $2; liveSweepsSQL the live sweeps with a cell's job of client $2. $1 is
// the job kind.
const (
	liveRunsSQL = `SELECT count(DISTINCT r.id) FROM river_job j JOIN runs r ON r.id = j.args->>'run_id'
		WHERE j.kind = $1 AND COALESCE(j.args->>'client', '') = $2 AND COALESCE(j.args->>'sweep_id', '') = ''
		  AND r.status IN ($3, $4, $5)`
	liveSweepsSQL = `SELECT count(DISTINCT s.id) FROM river_job j JOIN sweeps s ON s.id = j.args->>'sweep_id'
		WHERE j.kind = $1 AND COALESCE(j.args->>'client', '') = $2
		  AND s.status IN ($3, $4, $5)`
)

// checkLimit refuses one more run (sweeps: a sweep) of client when it has
// max live already, besides the one being inserted (self, "" before it is
// stored). max 0 is no limit.
func checkLimit(ctx context.Context, db querier, client string, sweeps bool, max int, self string) error {
	if max <= 0 {
		return nil
	}
	q := liveRunsSQL
	if sweeps {
		q = liveSweepsSQL
	}
	var n int
	if err := db.QueryRow(ctx, q+` AND `+selfCol(sweeps)+` <> $6`, RunArgs{}.Kind(), client,
		store.StatusQueued, store.StatusRunning, store.StatusPaused, self).Scan(&n); err != nil {
		return fmt.Errorf("queue: counting client %q's live runs: %w", client, err)
	}
	if n >= max {
		return &LimitError{Client: client, Sweeps: sweeps, Max: max}
	}
	return nil
}

// selfCol is the column of the run (sweep) being inserted.
func selfCol(sweeps bool) string {
	if sweeps {
		return "s.id"
	}
	return "r.id"
}
