package main

import (
	"context"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// openRunStore opens the run store -db names: a PostgreSQL database for a
// postgres:// (or postgresql://) URL, otherwise the SQLite file.
func openRunStore(db string) (store.Backend, error) {
	if pgstore.IsURL(db) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		st, err := pgstore.Open(ctx, db)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	return store.Open(db)
}
