package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/sweep"
)

// frontEnd is the server's Submitter and SweepSubmitter for `serve -slots
// 0`: the runs and sweeps started through it are queued on the PostgreSQL store's River queue, as
// `dashboard submit` queues them; with slots the server runs them itself
// (nil).
func frontEnd(st store.Backend, slots int, quota int64) (server.Submitter, server.SweepSubmitter, error) {
	if slots != 0 {
		return nil, nil, nil
	}
	pg, ok := st.(*pgstore.Store)
	if !ok {
		return nil, nil, fmt.Errorf("the store is not PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := queue.New(ctx, pg)
	if err != nil {
		return nil, nil, err
	}
	q.Quota = quota
	return func(ctx context.Context, sp spec.Run, client string, files server.DataFiles) (string, error) {
			return q.SubmitFor(ctx, sp, queue.From{Client: client, Files: queue.Files(files)})
		}, func(ctx context.Context, doc *sweep.Doc, client string, files server.DataFiles) (string, error) {
			return q.SubmitSweepFor(ctx, doc, queue.From{Client: client, Files: queue.Files(files)})
		}, nil
}
