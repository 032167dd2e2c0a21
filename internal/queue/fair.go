package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Fair share across clients on River.
//
// River hands out available jobs by priority, then scheduled_at, then id,
// and has no notion of a client. On one machine the session's queue serves
// clients in turn, so that a client's 21st run never delays another
// client's first (internal/session); the queue does the same on River with
// River's own ordering: each job's scheduled_at is set, when it is
// inserted, to an ordering key in the past (so the job is available at
// once), a little after
//
//   - the head of the queue: the smallest key among the jobs of its
//     priority still waiting, so that a client's first job waits behind
//     at most one job of each other client; and
//   - the client's own last waiting job of that priority, so that each
//     client's jobs keep their order.
//
// So with client A's ten runs waiting and client B queueing one, B's run
// is taken right after A's next one; B's second waits behind A's next two,
// and so on: the clients take turns. Keys start at FairBase and grow by
// FairStep per job a client has waiting; once the queue is empty they
// start at FairBase again. Priorities still come first: interactive runs
// before sweep cells, whoever queued them. A job River queues again (a
// retry, or a rescue) gets River's own scheduled_at, the time of its
// retry, and so waits behind the jobs with keys. The keys are computed
// under an advisory lock, so jobs inserted at once by several servers get
// distinct places.

// FairBase is the earliest ordering key, FairStep the distance between a
// client's successive waiting jobs.
var (
	FairBase = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	FairStep = time.Millisecond
)

// fairLock is the advisory lock key under which ordering keys are computed.
const fairLock = 0x66776c6166 // "fwlaf"

// insert inserts a run's job in its client's fair place (see above).
func (q *Queue) insert(ctx context.Context, args RunArgs, priority int) error {
	err := pgx.BeginFunc(ctx, q.st.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(fairLock)); err != nil {
			return err
		}
		res, err := q.client.InsertTx(ctx, tx, args, &river.InsertOpts{Priority: priority, MaxAttempts: MaxAttempts,
			UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil || res.UniqueSkippedAsDuplicate {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE river_job SET scheduled_at = LEAST(now(), GREATEST(
				COALESCE((SELECT min(scheduled_at) FROM river_job
					WHERE state = 'available' AND queue = $2 AND priority = $3 AND id <> $1), $5),
				COALESCE((SELECT max(scheduled_at) FROM river_job
					WHERE state = 'available' AND queue = $2 AND priority = $3 AND id <> $1 AND kind = $6 AND COALESCE(args->>'client', '') = $4)
					+ $7 * interval '1 microsecond', $5)))
			WHERE id = $1`,
			res.Job.ID, river.QueueDefault, priority, args.Client, FairBase, args.Kind(), FairStep.Microseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("queue: inserting the job of run %s: %w", args.RunID, err)
	}
	return nil
}
