package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

func open(t *testing.T, c *pgtest.Cluster) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), c.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the store's conformance suite on PostgreSQL, a fresh
// database of one throwaway cluster for each check.
func TestConformance(t *testing.T) {
	c := pgtest.Shared(t)
	storetest.Run(t, func(t *testing.T) store.Backend { return open(t, c) }, pgstore.SetClock)
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
