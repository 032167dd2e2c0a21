package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// Defaults of a Worker's configuration.
//
// DefaultRescueAfter is fit for a user watching the page: a run whose
// worker died is running again elsewhere within half a minute (the pages
// call the worker silent after store.SilentAfter, three heartbeats, and
// count down to the rescue), while a worker that only missed beats for a
// while (a busy machine, a database restart or failover of a few seconds,
// a brief network cut) keeps its run rather than seeing it restarted from
// the start: fifteen heartbeats of slack. A rescue costs the run's work so
// far, never its results (a run is a pure function of its spec, DESIGN §7).
const (
	DefaultRescueAfter = 30 * time.Second
	DefaultBeatEvery   = store.BeatEvery
	DefaultFlushEvery  = store.DefaultFlushInterval
)

// FetchCooldown is the least time between two fetches of jobs by a
// worker.
const FetchCooldown = 5 * time.Millisecond

// Config configures a Worker.
type Config struct {
	Store *pgstore.Store
	Name  string // the worker's name, shown with the runs it ran
	Slots int    // jobs at once (0: the CPUs)
	// RescueAfter is how old a running run's heartbeat may grow before
	// its worker is taken for dead and the run given back to the queue
	// (rescue.go); at least two BeatEvery. Runs may last any time. The
	// same on every worker.
	RescueAfter time.Duration
	// DataDir is the worker's data folder (-data): a run's files named
	// from the submitter's data folder are read from it, checked by
	// their hash (data.go); "" for none.
	DataDir string
	// CacheDir keeps the data files fetched from the store (default:
	// DefaultCacheDir, the user's own; made 0700 and checked private by
	// PrepareCacheDir).
	CacheDir   string
	BeatEvery  time.Duration // the run's heartbeat in the store
	FlushEvery time.Duration // how often records are written
	Logger     *slog.Logger
}

// The worker's session manager leaves budgets and pause timeouts to the
// server that queued a run.
const (
	unbounded      = 1 << 50
	unboundedPause = 100 * 365 * 24 * time.Hour
)

// Worker takes run jobs from River and runs them.
type Worker struct {
	river.WorkerDefaults[RunArgs]
	cfg    Config
	client *river.Client[pgx.Tx]
	m      *metrics
	// sess executes the claimed runs, as a server's manager executes its
	// own (session.Manager.Execute): its run slots are the worker's slots,
	// its pauses follow the store's (the server that paused a run times
	// the pause out, through the store), its record budgets are the
	// server's that queued the run.
	sess *session.Manager

	stopRescue context.CancelFunc
	rescuing   chan struct{} // closed when the rescue loop has ended
}

// NewWorker returns a worker on the store's database (River's tables
// migrated); Start starts it.
func NewWorker(ctx context.Context, cfg Config) (*Worker, error) {
	if cfg.Store == nil {
		return nil, errors.New("queue: a worker needs a PostgreSQL store")
	}
	if cfg.Name == "" {
		return nil, errors.New("queue: a worker needs a name")
	}
	if cfg.Slots < 0 {
		return nil, fmt.Errorf("queue: slots must be non-negative, got %d", cfg.Slots)
	}
	if cfg.Slots == 0 {
		cfg.Slots = runtime.NumCPU()
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = DefaultRescueAfter
	}
	if cfg.BeatEvery <= 0 {
		cfg.BeatEvery = DefaultBeatEvery
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	if cfg.RescueAfter < 2*cfg.BeatEvery {
		return nil, fmt.Errorf("queue: the rescue delay (%v) must be at least two heartbeats (%v)", cfg.RescueAfter, 2*cfg.BeatEvery)
	}
	if cfg.CacheDir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return nil, fmt.Errorf("queue: the data cache: %w", err)
		}
		cfg.CacheDir = dir
	}
	if err := PrepareCacheDir(cfg.CacheDir); err != nil {
		return nil, fmt.Errorf("queue: the data cache: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := Migrate(ctx, cfg.Store.Pool()); err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, m: newMetrics(), sess: session.NewManager(session.Options{
		MaxActive: cfg.Slots, MaxStored: cfg.Slots,
		MaxRecords: unbounded, MaxTotalRecords: unbounded, MaxMemory: unbounded,
		PauseTimeout: unboundedPause,
	})}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely[RunArgs](workers, w); err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	c, err := river.NewClient(riverpgxv5.New(cfg.Store.Pool()), &river.Config{
		ID: cfg.Name,
		// the shared queue, and the worker's own, where jobs are lent
		// slots its paused runs gave back or its runs lend (lend.go)
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Slots},
			lendQueue(cfg.Name): {MaxWorkers: cfg.Slots}},
		Workers: workers,
		// a freed slot takes the next job within a few milliseconds
		// (River's default waits 100 ms between fetches)
		FetchCooldown: FetchCooldown,
		// no timeout: a run lasts as long as it needs, and River's
		// rescuer, which goes by timeouts, leaves its job alone; runs
		// are rescued by their heartbeat (rescue.go)
		JobTimeout: -1,
		Logger:     cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	w.client = c
	return w, nil
}

// Start starts taking jobs, and rescuing the runs of workers that died.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.client.Start(ctx); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.stopRescue, w.rescuing = cancel, make(chan struct{})
	lent := make(chan struct{})
	go func() {
		defer close(lent)
		w.lendLoop(rctx)
	}()
	go func() {
		defer close(w.rescuing)
		w.rescueLoop(rctx)
		<-lent
	}()
	return nil
}

// Stop stops taking jobs and waits until the running ones finish, at most
// until ctx ends; then it cancels them, which releases their runs to the
// queue, and waits for that (at most release). It returns the number of
// runs released.
func (w *Worker) Stop(ctx context.Context, release time.Duration) (int, error) {
	if w.stopRescue != nil {
		w.stopRescue()
		<-w.rescuing
	}
	before := w.m.released.Load()
	err := w.client.Stop(ctx)
	if err == nil {
		return int(w.m.released.Load() - before), w.sess.Close(ctx)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), release)
	defer cancel()
	err = w.client.StopAndCancel(rctx)
	if cerr := w.sess.Close(rctx); err == nil {
		err = cerr
	}
	return int(w.m.released.Load() - before), err
}

// Work runs one job (River calls it).
func (w *Worker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	id := job.Args.RunID
	claim := fmt.Sprintf("%s/%d/%d", w.cfg.Name, job.ID, job.Attempt)
	err := w.cfg.Store.Claim(ctx, id, claim)
	switch {
	case errors.Is(err, pgstore.ErrNotLive), errors.Is(err, store.ErrNotFound):
		return nil // cancelled while queued, or deleted: nothing to run
	case err != nil:
		return err // the database is away: River tries again
	}
	w.m.running.Add(1)
	defer w.m.running.Add(-1)
	out, err := w.execute(ctx, id, claim, job.Args.Client)
	if out == released {
		// a worker that was stopped or cut off may find, when it comes
		// back, that its run was rescued and runs on another worker: the
		// job is that worker's now, and no retry of it must start the
		// run afresh over the other's records
		if now, _, err := w.cfg.Store.Runner(context.WithoutCancel(ctx), id); err == nil && now != "" && now != claim {
			out = lost
		}
	}
	switch out {
	case released:
		w.m.released.Add(1)
		if err == nil {
			err = errors.New("released")
		}
		return fmt.Errorf("run %s released: %w", id, err)
	case lost:
		return nil
	}
	if err != nil {
		w.m.failures.Add(1)
		return err
	}
	w.m.finished.Add(1)
	if job.Args.SweepID != "" {
		return w.endSweep(context.WithoutCancel(ctx), job.Args.SweepID)
	}
	return nil
}

// endSweep sets a sweep's status once none of its cells' runs is live:
// failed if one failed, cancelled if one was cancelled, done otherwise.
func (w *Worker) endSweep(ctx context.Context, id string) error {
	sw, err := w.cfg.Store.GetSweep(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	status := store.StatusDone
	for _, c := range sw.Cells {
		if c.RunID == "" {
			continue
		}
		r, err := w.cfg.Store.Get(ctx, c.RunID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		switch {
		case store.Live(r.Status):
			return nil
		case r.Status == store.StatusFailed:
			status = store.StatusFailed
		case r.Status == store.StatusCancelled && status == store.StatusDone:
			status = store.StatusCancelled
		}
	}
	return w.cfg.Store.SetSweepStatus(ctx, id, status)
}
