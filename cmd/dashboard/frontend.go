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
)

// frontEnd is the server's Submitter for `serve -slots 0`: the runs started
// through it are queued on the PostgreSQL store's River queue, as
// `dashboard submit` queues them; with slots the server runs them itself
// (nil).
func frontEnd(st store.Backend, slots int) (server.Submitter, error) {
	if slots != 0 {
		return nil, nil
	}
	pg, ok := st.(*pgstore.Store)
	if !ok {
		return nil, fmt.Errorf("the store is not PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := queue.New(ctx, pg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, sp spec.Run) (string, error) { return q.Submit(ctx, sp) }, nil
}
