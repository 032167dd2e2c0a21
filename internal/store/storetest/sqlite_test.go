package storetest_test

import (
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestSQLite runs the conformance suite on the SQLite store, on a file and
// in memory.
func TestSQLite(t *testing.T) {
	for _, where := range []string{"file", "memory"} {
		t.Run(where, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Backend {
				path := store.Memory
				if where == "file" {
					path = filepath.Join(t.TempDir(), "fwlab.db")
				}
				s, err := store.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}, store.SetClock)
		})
	}
}
