package storetest_test

import (
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestSQLite runs the conformance suite on the SQLite store, on a file and
// in memory, but for its bulk checks (TestSQLiteBulk).
func TestSQLite(t *testing.T) {
	onSQLite(t, func(c storetest.Check) bool { return !c.Bulk })
}

// TestSQLiteBulk runs the conformance suite's bulk checks on the SQLite
// store: one goroutine's many writes and reads, which the race detector
// slows tenfold in SQLite's driver (make test runs it without the
// detector: the Makefile's RACE_OFF).
func TestSQLiteBulk(t *testing.T) {
	onSQLite(t, func(c storetest.Check) bool { return c.Bulk })
}

func onSQLite(t *testing.T, which func(storetest.Check) bool) {
	for _, where := range []string{"file", "memory"} {
		t.Run(where, func(t *testing.T) {
			storetest.RunChecks(t, func(t *testing.T) store.Backend {
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
			}, store.SetClock, which)
		})
	}
}
