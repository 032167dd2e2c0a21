// Package store keeps fwlab's runs on disk: an embedded SQLite database
// (the pure-Go modernc.org/sqlite driver, so no cgo) holding each run's spec,
// instance summary, status, the user's name and note, every trace's records
// with all their fields, the traces' summaries and panels, and sweeps.
//
// Live runs belong to the session layer; it puts a run here when it is
// created, appends its records in batches while it streams (so a crash loses
// at most the batch in flight) and sets its status when it ends. A run that
// was queued, running or paused when its process died is marked
// interrupted by the next process that opens the file as its owner, its
// records kept.
//
// Records are stored as one compact binary blob per appended batch (see
// codec.go), bit-exact on decoding: on a LASSO trace about 35 bytes for a
// record with objective, gap and sampled-gradient error, with the
// database's own overhead (BenchmarkStoreRecords).
//
// A live run's life in the store, as the session layer drives it:
//
//	id, _ := st.PutRun(ctx, &store.Run{Spec: sp, Version: v, Status: store.StatusQueued, Traces: traces})
//	st.SetInstance(ctx, id, inst)          // once the instance is built
//	st.SetStatus(ctx, id, store.StatusRunning, time.Time{})
//	a := st.NewAppender(id, 0)             // the Recorder calls a.Add(trace, rec)
//	a.Close()                              // the last records, committed
//	st.EndRun(ctx, id, store.Ending{       // the end in one write
//		Traces: results, Message: why, Status: store.StatusDone, Ended: time.Now()})
//
// The file is opened in WAL mode with a busy timeout and foreign keys on, so
// several goroutines (and processes: `dashboard import` beside a running
// server) may read and write at once. The schema is versioned (PRAGMA
// user_version) with ordered migrations in code, and its SQL kept portable.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Memory is the path of a store that lives in memory and keeps nothing.
const Memory = ":memory:"

// Store is an open run store. It is safe for concurrent use.
type Store struct {
	db        *sql.DB
	path      string
	lock      *os.File // held while open: this process owns the file's live runs
	owner     bool
	recovered int

	health health // the last write failure (Health)
	// stale holds the runs left live by a dead process that Open could
	// not mark interrupted (the store could not write): they read as
	// interrupted, and are written so once the store heals (Health).
	stale map[string]bool

	reading ReadTracker // runs whose records are being read (Trim spares them)

	// spent is set when a run's ending took the reserve's room (ending):
	// until the reserve is made again, that room is for endings only, and
	// records are refused as on a full disk.
	spent atomic.Bool
}

// ErrNotFound is returned (wrapped) for an unknown run or sweep id.
var ErrNotFound = errors.New("not found")

// ErrTooLarge is returned (wrapped) for a stored value over the cap a read
// was given (TracePanels).
var ErrTooLarge = errors.New("too large")

// DefaultPath is where the dashboard keeps its store unless told otherwise:
// $XDG_DATA_HOME/fwlab/fwlab.db, or ~/.local/share/fwlab/fwlab.db when
// XDG_DATA_HOME is unset (or not an absolute path, as the XDG rules say).
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fwlab", "fwlab.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store: the default path needs XDG_DATA_HOME or a home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "fwlab", "fwlab.db"), nil
}

// Open opens the store at path, creating the file and its parent
// directories if needed, and brings its schema up to date. Memory (":memory:")
// opens a private in-memory store. A database written by a newer fwlab
// (a higher schema version) is refused.
//
// The first process to open a file owns it (an advisory lock on path+".lock",
// released when the process ends, however it ends): the owner marks every
// run left queued, running or paused as interrupted. Another process opening
// the same file meanwhile (`dashboard import` while the server runs) reads
// and writes but leaves the owner's live runs alone.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: empty path")
	}
	s := &Store{path: path}
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	var dsn string
	if path == Memory {
		dsn = "file::memory:?" + q.Encode()
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		// the path goes in a file: URI, so escape what a URI would read
		// (?, #, %) without touching the separators
		uri := fileURI(path)
		if err := checkAtOpen(uri, q); err != nil {
			return nil, fmt.Errorf("store: %s is damaged and was not opened: %w (dashboard store check %s lists the damage; dashboard store salvage %s NEW copies what can be read)", path, err, path, path)
		}
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			// an existing file has its page size, vacuum mode and WAL mode
			// already, and may sit on a full disk: open it without writing
		} else if err := initFile(uri, q); err != nil {
			return nil, fmt.Errorf("store: creating %s: %w", path, err)
		}
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		dsn = uri + "?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", path, err)
	}
	s.db = db
	if path == Memory {
		// every connection to :memory: is a database of its own
		db.SetMaxOpenConns(1)
		s.owner = true
	} else {
		// readers run side by side in WAL mode; keep their connections
		// (each new one repeats the pragmas)
		db.SetMaxIdleConns(8)
		lock, owner, err := lockFile(path + ".lock")
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("store: %w", err)
		}
		s.lock, s.owner = lock, owner
	}
	ctx := context.Background()
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if s.owner {
		// A store that cannot write (a full disk) still opens, degraded
		// (Health says why), so that its runs can be read and exported.
		if err := s.dropPartialImports(ctx); err != nil && !storageFailure(err) {
			s.Close()
			return nil, fmt.Errorf("store: %s: %w", path, err)
		}
		n, err := s.markInterrupted(ctx)
		if err != nil && !storageFailure(err) {
			s.Close()
			return nil, fmt.Errorf("store: %s: %w", path, err)
		}
		if err != nil {
			s.noteWrite(err)
			if n, err = s.rememberStale(ctx); err != nil {
				s.Close()
				return nil, fmt.Errorf("store: %s: %w", path, err)
			}
		}
		s.recovered = n
		if s.health.err == nil {
			s.makeReserve() // room for runs' endings when the disk fills
		}
	}
	return s, nil
}

// fileURI is path as a file: URI: the characters a URI would read (?, #,
// %) escaped, the separators left alone.
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// pageSize is the page size of a new database file: record batches are
// blobs of a few kilobytes, and larger pages waste less of their tails.
const pageSize = 16384

// initFile sets what can only be set before a database file has content:
// the page size and incremental auto-vacuum (so that deleted runs give
// their space back), then WAL mode. On an existing file the first two are
// no-ops.
func initFile(uri string, q url.Values) error {
	db, err := sql.Open("sqlite", uri+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, p := range []string{fmt.Sprintf("PRAGMA page_size = %d", pageSize), "PRAGMA auto_vacuum = INCREMENTAL", "PRAGMA journal_mode = WAL"} {
		if _, err := db.Exec(p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// Close closes the database and releases the file's ownership.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.lock != nil {
		s.lock.Close() // releases the lock
		s.lock = nil
	}
	return err
}

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Owner reports whether this store owns the file's live runs (see Open).
func (s *Store) Owner() bool { return s.owner }

// Recovered returns the number of runs Open marked interrupted.
func (s *Store) Recovered() int { return s.recovered }

// migrate applies the migrations the database has not seen, each in its own
// transaction with the version bump.
func (s *Store) migrate(ctx context.Context) error {
	return migrateTo(ctx, s.db, len(migrations))
}

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// migrateTo brings db to schema version target.
func migrateTo(ctx context.Context, db *sql.DB, target int) error {
	for {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			tx.Rollback()
			return fmt.Errorf("reading the schema version: %w", err)
		}
		if v > len(migrations) {
			tx.Rollback()
			return fmt.Errorf("schema version %d is newer than this fwlab's (%d): use a newer fwlab or another -db file", v, len(migrations))
		}
		if v >= target {
			return tx.Rollback()
		}
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrating to schema version %d: %w", v+1, err)
		}
	}
}

// markInterrupted marks the runs (and traces) that were live as interrupted.
func (s *Store) markInterrupted(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ? WHERE status IN (?, ?, ?)`,
		StatusInterrupted, StatusQueued, StatusRunning, StatusPaused)
	if err != nil {
		return 0, fmt.Errorf("marking interrupted runs: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `UPDATE traces SET status = ? WHERE status IN (?, ?, ?)`,
		StatusInterrupted, StatusQueued, StatusRunning, StatusPaused); err != nil {
		return 0, fmt.Errorf("marking interrupted traces: %w", err)
	}
	return int(n), tx.Commit()
}

// IntegrityCheck runs SQLite's integrity check and returns nil when it
// reports "ok".
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	return fmt.Errorf("store: integrity check: %s", strings.Join(msgs, "; "))
}

// DiskUsage returns the bytes the database occupies on disk: the main
// file's pages (page count × page size, or the file's size when pages
// still in the log make it larger) and the write-ahead log beside it,
// which holds what was written since the last checkpoint and keeps its
// size until one truncates it (truncateWAL).
func (s *Store) DiskUsage(ctx context.Context) (int64, error) {
	main, err := s.mainUsage(ctx)
	if err != nil {
		return 0, err
	}
	if s.path != Memory {
		if fi, err := os.Stat(s.path); err == nil {
			main = max(main, fi.Size())
		}
	}
	return main + s.walSize(), nil
}

// walSize returns the size of the write-ahead log file (0 for :memory:, or
// when there is none).
func (s *Store) walSize() int64 {
	if s.path == Memory {
		return 0
	}
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// mainUsage returns the bytes of the main database file's pages.
func (s *Store) mainUsage(ctx context.Context) (int64, error) {
	var pages, size int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return 0, fmt.Errorf("store: disk usage: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil {
		return 0, fmt.Errorf("store: disk usage: %w", err)
	}
	return pages * size, nil
}
