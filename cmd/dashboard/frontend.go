package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/sweep"
)

// frontEnd is the server's Submitter and SweepSubmitter on a PostgreSQL
// store: the runs and sweeps started through the server are queued on
// River, as `dashboard submit` queues them, whatever the server's slots (a
// server with slots works the queue as well, serveWorker), each client
// within the server's limits on live runs and sweeps (a run that starts
// paused within its -pause-timeout). With a SQLite file
// the server runs them itself (nil).
func frontEnd(st store.Backend, quota int64, pauseTimeout time.Duration) (server.Submitter, server.SweepSubmitter, error) {
	pg, ok := st.(*pgstore.Store)
	if !ok {
		return nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := queue.New(ctx, pg)
	if err != nil {
		return nil, nil, err
	}
	q.Quota = quota
	return func(ctx context.Context, sp spec.Run, client string, max int, files server.DataFiles) (string, error) {
			id, err := q.SubmitFor(ctx, sp, queue.From{Client: client, Files: queue.Files(files), MaxRuns: max, PauseTimeout: pauseTimeout})
			return id, clientLimit(err)
		}, func(ctx context.Context, doc *sweep.Doc, client string, max int, files server.DataFiles) (string, error) {
			id, err := q.SubmitSweepFor(ctx, doc, queue.From{Client: client, Files: queue.Files(files), MaxSweeps: max})
			return id, clientLimit(err)
		}, nil
}

// clientLimit marks the queue's refusal over a client's limit as the
// server's, which answers it 429.
func clientLimit(err error) error {
	if errors.Is(err, queue.ErrClientLimit) {
		return fmt.Errorf("%w: %w", server.ErrClientLimit, err)
	}
	return err
}

// serveWorker is the worker of a server with slots on a PostgreSQL store:
// it takes queued jobs, the server's own and others', as `dashboard
// worker` does, in slots slots, reading the files named from the server's
// -data folder (data) there.
func serveWorker(ctx context.Context, st *pgstore.Store, name string, slots int, rescue time.Duration, data string, stderr io.Writer) (*queue.Worker, error) {
	if data != "" {
		abs, err := filepath.Abs(data)
		if err != nil {
			return nil, fmt.Errorf("-data: %w", err)
		}
		data = abs
	}
	w, err := queue.NewWorker(ctx, queue.Config{Store: st, Name: name, Slots: slots, RescueAfter: rescue, DataDir: data,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	if err := w.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	return w, nil
}
