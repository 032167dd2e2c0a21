package pgstore

import (
	"context"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
)

// openShared opens the store on a fresh database of the package's shared
// throwaway cluster; the store is closed when the test ends.
func openShared(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.Shared(t).NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
