package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// WriteError says that the store's file refused a write (no space left, an
// I/O error, a read-only file or file system, a damaged file): the store
// is degraded until a write succeeds again (see Health).
type WriteError struct {
	Path string    // the store's file
	Err  error     // the cause, as the database reported it
	When time.Time // when the store first failed to write
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("the run store %s cannot write: %v", e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// health is the store's record of its last write failure.
type health struct {
	mu     sync.Mutex
	err    *WriteError // nil: writes succeed
	probed time.Time   // the last probe while degraded
}

// ProbeInterval is how often Health tries a write while the store is
// degraded.
const ProbeInterval = time.Second

// probeBytes is what a probe writes: enough that a full file system
// refuses it, small enough to cost nothing.
const probeBytes = 256 << 10

// storageFailure reports whether err is the file refusing a write (as
// opposed to a refused value, a missing run or a cancelled context).
func storageFailure(err error) bool {
	if err == nil {
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary result code
		case 3, // SQLITE_PERM
			8,  // SQLITE_READONLY
			10, // SQLITE_IOERR
			11, // SQLITE_CORRUPT
			13, // SQLITE_FULL
			14, // SQLITE_CANTOPEN
			26: // SQLITE_NOTADB
			return true
		}
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// noteWrite records the outcome of a write: a storage failure makes the
// store degraded. It returns err unchanged.
func (s *Store) noteWrite(err error) error {
	if !storageFailure(err) {
		return err
	}
	s.health.mu.Lock()
	if s.health.err == nil {
		s.health.err = &WriteError{Path: s.path, Err: rootCause(err), When: time.Now()}
		s.health.probed = time.Now()
	}
	s.health.mu.Unlock()
	return err
}

// rootCause is the database's own error behind err's context.
func rootCause(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se
	}
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// Health reports whether the store can write: nil, or a *WriteError naming
// the file and the cause of the write failure that made it degraded. Every
// write method notes a storage failure (no space, I/O error, read-only or
// damaged file); while degraded, Health tries a small write of its own at
// most every ProbeInterval and turns healthy again when that succeeds (the
// disk was freed, the file system remounted). Callers refuse new work while
// it returns an error; runs already writing fail on their own writes.
func (s *Store) Health() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if s.health.err == nil {
		return nil
	}
	if time.Since(s.health.probed) < ProbeInterval {
		return s.health.err
	}
	s.health.probed = time.Now()
	// healthy again only with the reserve back and room beside it (the
	// probe is written after the reserve): a disk with room for the probe
	// alone would give the room runs' endings need to the next records
	if !s.makeReserve() {
		s.health.err.Err = fmt.Errorf("no room for the reserve of runs' endings (%d bytes): %w", ReserveBytes, syscall.ENOSPC)
		return s.health.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.probe(ctx); err != nil {
		if storageFailure(err) {
			s.health.err.Err = rootCause(err)
		}
		return s.health.err
	}
	s.health.err = nil
	if s.stale != nil {
		if _, err := s.markInterrupted(ctx); err == nil {
			s.stale = nil
		}
	}
	return nil
}

// rememberStale records the runs left live when Open could not mark them
// interrupted, and returns how many there are.
func (s *Store) rememberStale(ctx context.Context) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE status IN (?, ?, ?)`, StatusQueued, StatusRunning, StatusPaused)
	if err != nil {
		return 0, fmt.Errorf("listing the runs left live: %w", err)
	}
	defer rows.Close()
	stale := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return 0, fmt.Errorf("listing the runs left live: %w", err)
		}
		stale[id] = true
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("listing the runs left live: %w", err)
	}
	if len(stale) > 0 {
		s.stale = stale
	}
	return len(stale), nil
}

// staleMessage is the message of a run read as interrupted before the
// store could write so.
const staleMessage = "interrupted: the server stopped during the run (the run store could not yet write so)"

// unstale makes a run left live by a dead process read as interrupted.
func (s *Store) unstale(r *Run) {
	s.health.mu.Lock()
	stale := s.stale[r.ID]
	s.health.mu.Unlock()
	if !stale {
		return
	}
	if Live(r.Status) {
		r.Status = StatusInterrupted
		if r.Message == "" {
			r.Message = staleMessage
		}
	}
	for i := range r.Traces {
		if Live(r.Traces[i].Status) {
			r.Traces[i].Status = StatusInterrupted
		}
	}
}

// probe writes probeBytes in a transaction of its own, then removes them.
func (s *Store) probe(ctx context.Context) error {
	err := s.rawTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM write_probe`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO write_probe (id, data) VALUES (1, zeroblob(?))`, probeBytes)
		return err
	})
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `DELETE FROM write_probe`)
	return err
}

// ReserveBytes is the room a store file keeps beside it (PATH-reserve, a
// file of zeros made when the store opens and whenever it turns healthy):
// when the disk is full, a run's ending (its traces' results, message and
// status) frees it and is written in its place, so that a run that ended
// failed is failed after a restart too, not interrupted.
const ReserveBytes = 2 << 20

func (s *Store) reservePath() string { return s.path + "-reserve" }

// makeReserve makes the reserve file if it is missing and reports whether
// the reserve is there (false when the disk has no room for it).
func (s *Store) makeReserve() bool {
	if s.path == Memory {
		return true
	}
	p := s.reservePath()
	if fi, err := os.Stat(p); err == nil && fi.Size() == ReserveBytes {
		s.spent.Store(false)
		return true
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false
	}
	_, werr := f.Write(make([]byte, ReserveBytes))
	serr := f.Sync()
	if cerr := f.Close(); werr != nil || serr != nil || cerr != nil {
		os.Remove(p)
		return false
	}
	s.spent.Store(false)
	return true
}

// errSpent refuses records while the reserve's room is kept for endings.
var errSpent = fmt.Errorf("the disk is full and its last room is kept for runs' endings: %w", syscall.ENOSPC)

// ending runs a write of a run's ending; when the disk is full it frees
// the reserve (records are refused from then on, so the room stays for
// endings) and tries again, a few times: the endings of runs that stop
// together share the room. (No checkpoint between tries: it would copy the
// write-ahead log into the main file and spend the room on that.)
func (s *Store) ending(write func() error) error {
	err := write()
	if !full(err) || s.path == Memory {
		return err
	}
	wasSpent := s.spent.Swap(true)
	if rerr := os.Remove(s.reservePath()); rerr != nil && !wasSpent {
		s.spent.Store(false)
		return err // no reserve left
	}
	for try := 0; try < endingTries && full(err); try++ {
		err = write()
	}
	return err
}

// endingTries is how many times ending writes again on a full disk.
const endingTries = 3

// full reports whether err says the disk (or the file's quota) is full.
func full(err error) bool {
	if err == nil {
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 13 { // SQLITE_FULL
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
