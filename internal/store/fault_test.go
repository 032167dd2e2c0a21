package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// faults make a real SQLite file refuse writes the way a failing disk
// does, and then heal: the store runs on one connection so that the
// connection's pragma holds for every statement.
var faults = []struct {
	name  string
	cause string // in the error
	fail  string // pragma that makes writes fail
	heal  string
}{
	// the file may not grow past its present size: SQLITE_FULL, exactly
	// what a full disk answers
	{name: "full", cause: "full", fail: "PRAGMA max_page_count = %d", heal: "PRAGMA max_page_count = 1073741823"},
	// the connection may not write at all: SQLITE_READONLY, as a file
	// system remounted read-only answers
	{name: "read-only", cause: "readonly", fail: "PRAGMA query_only = 1", heal: "PRAGMA query_only = 0"},
}

func breakStore(t *testing.T, s *Store, pragma string) {
	t.Helper()
	if strings.Contains(pragma, "%d") {
		var pages int64
		if err := s.db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		pragma = strings.Replace(pragma, "%d", itoa64(pages), 1)
	}
	if _, err := s.db.Exec(pragma); err != nil {
		t.Fatalf("%s: %v", pragma, err)
	}
}

func itoa64(n int64) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// A write failure stops the appender for good (the stored records stay a
// whole prefix of those added: a later batch is never renumbered into a
// hole), tells OnError once, and makes the store degraded with a
// WriteError naming the file and the cause, until a probe write succeeds.
func TestWriteFailureDegradesTheStoreUntilItHeals(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			s, path := openTemp(t)
			s.db.SetMaxOpenConns(1)
			id, err := s.PutRun(ctx, testRun("lasso", "afw"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Health(); err != nil {
				t.Fatalf("a fresh store is degraded: %v", err)
			}
			recs := randRecords(rand.New(rand.NewPCG(3, 4)), 40_000)
			for i := range recs {
				recs[i].K = i
			}
			a := s.NewAppender(id, time.Hour) // written by Flush only
			var calls atomic.Int32
			var seen atomic.Value
			a.OnError(func(err error) { calls.Add(1); seen.Store(err) })
			a.Add(0, recs[:1000]...)
			if err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}

			breakStore(t, s, f.fail)
			a.Add(0, recs[1000:30_000]...)
			err = a.Flush(ctx)
			if err == nil || !strings.Contains(err.Error(), f.cause) {
				t.Fatalf("flush on a broken file: %v; want the cause %q", err, f.cause)
			}
			if calls.Load() != 1 || seen.Load() == nil {
				t.Errorf("OnError called %d times", calls.Load())
			}
			var we *WriteError
			if herr := s.Health(); !errors.As(herr, &we) || we.Path != path || !strings.Contains(herr.Error(), path) || !strings.Contains(herr.Error(), f.cause) {
				t.Fatalf("Health after a failed write: %v; want a WriteError naming %s and %q", herr, path, f.cause)
			}

			// healed: the appender stays stopped, the store heals at the
			// next probe
			if _, err := s.db.Exec(f.heal); err != nil {
				t.Fatal(err)
			}
			a.Add(0, recs[30_000:]...)
			if err := a.Close(); err == nil {
				t.Error("Close after a failed write returned no error")
			}
			if calls.Load() != 1 {
				t.Errorf("OnError called %d times", calls.Load())
			}
			got, err := s.Records(ctx, id, 0, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i].K != i {
					t.Fatalf("stored record %d has k %d: the stored records are not a prefix of those added", i, got[i].K)
				}
			}
			r, _ := s.Get(ctx, id)
			if r.Traces[0].Records != len(got) || len(got) < 1000 || len(got) >= len(recs) {
				t.Errorf("trace reports %d records, %d read, %d added", r.Traces[0].Records, len(got), len(recs))
			}
			if err := s.Health(); err == nil {
				t.Error("healthy again before the probe interval")
			}
			time.Sleep(ProbeInterval + 50*time.Millisecond)
			if err := s.Health(); err != nil {
				t.Errorf("still degraded once the file takes writes: %v", err)
			}
			if err := s.SetStatus(ctx, id, StatusFailed, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
}

// Every write method notes a storage failure; a refused value does not
// make the store degraded.
func TestEveryWriteNotesStorageFailures(t *testing.T) {
	ctx := context.Background()
	writes := map[string]func(s *Store, id string) error{
		"PutRun":      func(s *Store, _ string) error { _, err := s.PutRun(ctx, testRun("lasso", "afw")); return err },
		"SetStatus":   func(s *Store, id string) error { return s.SetStatus(ctx, id, StatusDone, time.Now()) },
		"SetMessage":  func(s *Store, id string) error { return s.SetMessage(ctx, id, "m") },
		"SetTrace":    func(s *Store, id string) error { return s.SetTrace(ctx, id, 0, TraceResult{Status: "converged"}) },
		"SetInstance": func(s *Store, id string) error { return s.SetInstance(ctx, id, Instance{Dim: 1}) },
		"Update":      func(s *Store, id string) error { n := "x"; return s.Update(ctx, id, Edit{Name: &n}) },
		"Delete":      func(s *Store, id string) error { _, err := s.Delete(ctx, id); return err },
		"Append": func(s *Store, id string) error {
			return s.AppendRecords(ctx, id, 0, []solver.Record{{K: 1, Step: "fw"}})
		},
		"BeginImport": func(s *Store, _ string) error { _, err := s.BeginImport(ctx); return err },
	}
	for name, w := range writes {
		t.Run(name, func(t *testing.T) {
			s, _ := openTemp(t)
			s.db.SetMaxOpenConns(1)
			id, err := s.PutRun(ctx, testRun("lasso", "afw"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetStatus(ctx, id, "nonsense", time.Time{}); err == nil || s.Health() != nil {
				t.Fatalf("a refused value: %v, health %v", err, s.Health())
			}
			breakStore(t, s, "PRAGMA query_only = 1")
			if err := w(s, id); err == nil {
				t.Fatal("the write succeeded on a read-only connection")
			}
			if s.Health() == nil {
				t.Error("the store is not degraded after a failed write")
			}
		})
	}
}
