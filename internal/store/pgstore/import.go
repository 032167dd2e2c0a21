package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// importTx is a run streaming in inside one transaction: nobody else sees
// it until Commit, and a process that dies part-way leaves nothing (the
// transaction is rolled back with its connection). The content digest is
// unique among runs, so a bundle imported twice, even at the same moment
// by two processes, is stored once. An import holds one of the pool's
// connections until it ends, and needs no other.
type importTx struct {
	s      *Store
	tx     pgx.Tx
	id     string
	traces int
	done   bool
}

var _ store.Importer = (*Store)(nil)

// importIdle is how long an import's transaction may wait for the next
// part of its bundle (IdleInTransaction is for transactions that never
// wait on a client): it holds no lock a run's control needs, only its own
// new run.
const importIdle = 10 * time.Minute

// StreamImport begins an import (store.RunImport).
func (s *Store) StreamImport(ctx context.Context) (store.RunImport, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: beginning an import: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, true)`, fmt.Sprint(importIdle.Milliseconds())); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("store: beginning an import: %w", err)
	}
	for attempt := 0; attempt < 4; attempt++ {
		id := store.NewID()
		tag, err := tx.Exec(ctx, `INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us)
			VALUES ($1, $2, $3, '', '{}', '', $2) ON CONFLICT (id) DO NOTHING`, id, micros(now()), store.StatusRunning)
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("store: beginning an import: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return &importTx{s: s, tx: tx, id: id}, nil
		}
	}
	_ = tx.Rollback(context.WithoutCancel(ctx))
	return nil, fmt.Errorf("store: beginning an import: %w", store.ErrExists)
}

func (im *importTx) ID() string { return im.id }

func (im *importTx) live() error {
	if im.done {
		return errors.New("store: the import has ended")
	}
	return nil
}

func (im *importTx) AddTrace(ctx context.Context, t store.Trace) error {
	if err := im.live(); err != nil {
		return err
	}
	if t.Index != im.traces {
		return spec.Errorf(fmt.Sprintf("traces[%d].index", im.traces), "must be %d (traces in index order), got %d", im.traces, t.Index)
	}
	st := t.Status
	if st == "" {
		st = store.StatusRunning
	}
	if _, err := im.tx.Exec(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES ($1, $2, $3, $4, $5, $6)`,
		im.id, t.Index, t.Algo, t.Replication, t.Seed, st); err != nil {
		return fmt.Errorf("store: importing run %s trace %d: %w", im.id, t.Index, err)
	}
	im.traces++
	return nil
}

func (im *importTx) AppendRecords(ctx context.Context, trace int, recs []solver.Record) error {
	if err := im.live(); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	if err := appendIn(ctx, im.tx, im.id, trace, []store.Batch{{N: len(recs), Blob: store.EncodeBatch(nil, recs)}}); err != nil {
		return fmt.Errorf("store: importing run %s trace %d: %w", im.id, trace, err)
	}
	return nil
}

func (im *importTx) EndTrace(ctx context.Context, t store.Trace, r store.TraceResult) error {
	if err := im.live(); err != nil {
		return err
	}
	if err := store.CheckJSON("panels", r.Panels); err != nil {
		return err
	}
	if strings.IndexByte(r.PanelsError, 0) >= 0 {
		return spec.Errorf("panels_error", "must not contain the NUL character (PostgreSQL's text cannot hold it)")
	}
	var sum *string
	if r.Summary != nil {
		b, err := store.MarshalSummary(r.Summary)
		if err != nil {
			return fmt.Errorf("store: run %s trace %d: %w", im.id, t.Index, err)
		}
		str := string(b)
		sum = &str
	}
	status := r.Status
	if status == "" {
		status = store.StatusRunning
	}
	tag, err := im.tx.Exec(ctx, `UPDATE traces SET algo = $1, replication = $2, seed = $3, status = $4, summary = $5, panels = $6, panels_error = $7
		WHERE run_id = $8 AND idx = $9`, t.Algo, t.Replication, t.Seed, status, sum, nullJSON(r.Panels), r.PanelsError, im.id, t.Index)
	if err != nil {
		return fmt.Errorf("store: importing run %s trace %d: %w", im.id, t.Index, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(fmt.Sprintf("run %s trace %d", im.id, t.Index))
	}
	return nil
}

// Commit makes the run visible with r's fields and final status, as
// store.Import.Commit does; for a digest stored before (committed by now,
// by this process or another) it rolls the import back and answers that
// run.
func (im *importTx) Commit(ctx context.Context, r *store.Run, digest string) (string, bool, error) {
	if err := im.live(); err != nil {
		return "", false, err
	}
	if err := checkCommit(r); err != nil {
		return "", false, err
	}
	if digest != "" {
		// inside the import's transaction: it holds its own connection, and
		// asks for no other (imports filling the pool cannot wait on each other)
		if id, ok, err := byDigest(ctx, im.tx, digest); err != nil || ok {
			return im.endWith(ctx, id, ok, err)
		}
	}
	err := im.finish(ctx, r, digest)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "runs_digest" {
		// imported at the same moment by another: theirs is the run
		im.done = true
		_ = im.tx.Rollback(context.WithoutCancel(ctx))
		id, ok, err := byDigest(ctx, im.s.pool, digest)
		if err == nil && !ok {
			err = fmt.Errorf("store: run with digest %s vanished", digest)
		}
		if err != nil {
			return "", false, fmt.Errorf("store: committing the import of run %s: %w", im.id, err)
		}
		return id, true, nil
	}
	if err != nil {
		im.done = true
		_ = im.tx.Rollback(context.WithoutCancel(ctx))
		return "", false, fmt.Errorf("store: committing the import of run %s: %w", im.id, err)
	}
	im.done = true
	return im.id, false, nil
}

// endWith rolls the import back and answers run id (existing) or err.
func (im *importTx) endWith(ctx context.Context, id string, existing bool, err error) (string, bool, error) {
	im.done = true
	if rerr := im.tx.Rollback(context.WithoutCancel(ctx)); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return "", false, fmt.Errorf("store: committing the import of run %s: %w", im.id, err)
	}
	return id, existing, nil
}

// checkCommit checks the fields Commit stores.
func checkCommit(r *store.Run) error {
	if !store.KnownStatus(r.Status) || store.Live(r.Status) {
		return spec.Errorf("status", "must be a final status (done, failed, cancelled, interrupted), got %q", r.Status)
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{"name", r.Name, store.MaxName}, {"note", r.Note, store.MaxNote}, {"version", r.Version, store.MaxName}, {"message", r.Message, store.MaxNote}} {
		if err := checkText(c.field, c.v, c.max); err != nil {
			return err
		}
	}
	return store.CheckInstance(r.Instance)
}

// finish gives the run its fields and commits the transaction.
func (im *importTx) finish(ctx context.Context, r *store.Run, digest string) error {
	sp, err := json.Marshal(r.Spec)
	if err != nil {
		return fmt.Errorf("encoding the spec: %w", err)
	}
	created := r.Created
	if created.IsZero() {
		created = now()
	}
	var ended *int64
	if !r.Ended.IsZero() {
		e := micros(r.Ended)
		ended = &e
	}
	if r.Name == "" {
		if err := im.nameFromTraces(ctx, r); err != nil {
			return err
		}
	}
	if _, err := im.tx.Exec(ctx, `UPDATE runs SET created_us = $1, ended_us = $2, status = $3, problem = $4, spec = $5, version = $6, name = $7, note = $8,
		dim = $9, samples = $10, blocks = $11, fstar = $12, info_panels = $13, message = $14, digest = $15, entered_us = $16, outside = $17 WHERE id = $18`,
		micros(created), ended, r.Status, r.Spec.Problem, string(sp), r.Version, r.Name, r.Note,
		r.Instance.Dim, r.Instance.Samples, r.Instance.Blocks, r.Instance.FStar, nullJSON(r.Instance.Panels),
		r.Message, nullString(digest), micros(now()), r.Spec.Outside, im.id); err != nil {
		return err
	}
	if _, err := im.tx.Exec(ctx, `UPDATE traces SET status = $1 WHERE run_id = $2 AND status IN ($3, $4, $5)`,
		r.Status, im.id, store.StatusQueued, store.StatusRunning, store.StatusPaused); err != nil {
		return err
	}
	return im.tx.Commit(ctx)
}

// byDigest finds the committed run with a digest.
func byDigest(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, digest string) (string, bool, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT id FROM runs WHERE digest = $1`, digest).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return id, err == nil, err
}

// Abort rolls the import back (nothing after Commit).
func (im *importTx) Abort(ctx context.Context) error {
	if im.done {
		return nil
	}
	im.done = true
	if err := im.tx.Rollback(ctx); err != nil {
		return fmt.Errorf("store: removing the partial import %s: %w", im.id, err)
	}
	return nil
}

// nameFromTraces gives r, which has no name, its DefaultName from the
// traces imported so far (store.NameNew).
func (im *importTx) nameFromTraces(ctx context.Context, r *store.Run) error {
	algos, err := firstAlgos(ctx, im.tx, im.id)
	if err != nil {
		return err
	}
	named := *r
	named.Traces = nil
	for _, a := range algos {
		named.Traces = append(named.Traces, store.Trace{Algo: a})
	}
	store.NameNew(&named)
	r.Name = named.Name
	return nil
}
