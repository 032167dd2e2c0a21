package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fwlab/fwlab/internal/store"
)

// Path returns the database's URL without its password, for messages.
func (s *Store) Path() string { return Redact(s.url) }

// The store's health, as the SQLite store's (store.Store.Health): a write
// that the database refuses for want of storage (no space left, an I/O
// error, a read-only database) makes the store degraded, with a
// *store.WriteError naming the database and the cause, until a probe write
// succeeds again. PostgreSQL is shared, and the write that fails may be
// another process's (a worker's), so Health also probes by itself now and
// then while the store is healthy: a server that writes little still says
// it is degraded while the workers' writes fail.

// healthEvery bounds how often Health asks the database while the store
// is healthy (a ping), and probeEvery how often it tries a write then.
const (
	healthEvery = time.Second
	probeEvery  = 5 * time.Second
)

type healthState struct {
	mu     sync.Mutex
	at     time.Time         // the last ping
	probed time.Time         // the last probe write
	down   error             // the last ping's failure
	err    *store.WriteError // nil: writes succeed
}

// storageFailure reports whether err is the database refusing a write for
// want of storage, as opposed to a refused value, a lost claim or a
// cancelled context: SQLSTATE class 53 disk_full (53100), 58030 io_error,
// 25006 read_only_sql_transaction, XX001 data_corrupted.
func storageFailure(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "53100", "58030", "25006", "XX001":
		return true
	}
	return false
}

// noteWrite records the outcome of a write: a storage failure makes the
// store degraded. It returns err unchanged.
func (s *Store) noteWrite(err error) error {
	if !storageFailure(err) {
		return err
	}
	var pe *pgconn.PgError
	errors.As(err, &pe)
	s.health.mu.Lock()
	if s.health.err == nil {
		s.health.err = &store.WriteError{Path: s.Path(), Err: pe, When: time.Now()}
		s.health.probed = time.Now()
	}
	s.health.mu.Unlock()
	return err
}

// Health reports whether the store can write: nil; a *store.WriteError
// naming the database and the cause of the write failure that made it
// degraded (it turns healthy again once a probe write, tried at most every
// store.ProbeInterval, succeeds); or an error saying that the database
// cannot be reached. Callers refuse new work while it returns an error.
func (s *Store) Health() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.health.err != nil {
		if time.Since(s.health.probed) < store.ProbeInterval {
			return s.health.err
		}
		s.health.probed = time.Now()
		if err := s.probe(ctx); err != nil {
			if storageFailure(err) {
				var pe *pgconn.PgError
				errors.As(err, &pe)
				s.health.err.Err = pe
			}
			return s.health.err
		}
		s.health.err = nil
		return nil
	}
	if time.Since(s.health.at) < healthEvery {
		return s.health.down
	}
	s.health.at = time.Now()
	s.health.down = nil
	if err := s.pool.Ping(ctx); err != nil {
		s.health.down = fmt.Errorf("the run store %s cannot be reached: %w", s.Path(), err)
		return s.health.down
	}
	if time.Since(s.health.probed) >= probeEvery {
		s.health.probed = time.Now()
		if err := s.probe(ctx); storageFailure(err) {
			var pe *pgconn.PgError
			errors.As(err, &pe)
			s.health.err = &store.WriteError{Path: s.Path(), Err: pe, When: time.Now()}
			return s.health.err
		}
	}
	return nil
}

// probeBytes is what a probe writes: enough that a full file system refuses
// it (each page of it extends a file), small enough to cost nothing.
const probeBytes = 256 << 10

// probe writes probeBytes of incompressible data into a temporary table in
// a transaction that it rolls back: the database's files must grow to take
// it, and nothing is left.
func (s *Store) probe(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE fwlab_probe (b bytea) ON COMMIT DROP`); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO fwlab_probe SELECT decode(string_agg(md5(random()::text || i::text), ''), 'hex')
		FROM generate_series(1, $1::int) i`, probeBytes/16)
	return err
}

// writeFailure returns the storage failure that makes the store degraded,
// nil while it writes. It asks Health, so that a process that does not
// serve /healthz (a worker) also finds that room was made.
func (s *Store) writeFailure() error {
	var we *store.WriteError
	if err := s.Health(); errors.As(err, &we) {
		return we
	}
	return nil
}
