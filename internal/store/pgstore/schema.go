package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations[i] takes a database from schema version i to i+1 (the one row
// of fwlab_schema). A released migration is never edited: a change is a new
// entry at the end, and TestMigratesEveryEarlierVersion fills a database
// at every earlier version and opens it with the current code.
//
// Versions 1 to 3 are the steps the SQLite schema took (internal/store's
// schema.go), in PostgreSQL's types: BYTEA record batches, BOOLEAN stars,
// times as BIGINT microseconds since the Unix epoch.
var migrations = [][]string{
	// 1: runs, their traces and the traces' record batches.
	{
		`CREATE TABLE runs (
			id          TEXT PRIMARY KEY,
			created_us  BIGINT NOT NULL,
			ended_us    BIGINT,
			status      TEXT NOT NULL,
			problem     TEXT NOT NULL,
			spec        TEXT NOT NULL,
			version     TEXT NOT NULL,
			name        TEXT NOT NULL DEFAULT '',
			note        TEXT NOT NULL DEFAULT '',
			starred     BOOLEAN NOT NULL DEFAULT FALSE,
			dim         INTEGER NOT NULL DEFAULT 0,
			samples     INTEGER NOT NULL DEFAULT 0,
			blocks      INTEGER NOT NULL DEFAULT 0,
			fstar       DOUBLE PRECISION,
			info_panels TEXT
		)`,
		`CREATE INDEX runs_created ON runs (created_us, id)`,
		`CREATE INDEX runs_status ON runs (status)`,
		`CREATE INDEX runs_problem ON runs (problem)`,
		`CREATE TABLE traces (
			run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			idx          INTEGER NOT NULL,
			algo         TEXT NOT NULL,
			replication  INTEGER NOT NULL,
			seed         BIGINT NOT NULL,
			status       TEXT NOT NULL,
			records      INTEGER NOT NULL DEFAULT 0,
			summary      TEXT,
			panels       TEXT,
			panels_error TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (run_id, idx)
		)`,
		`CREATE INDEX traces_algo ON traces (algo, run_id)`,
		`CREATE TABLE batches (
			run_id    TEXT NOT NULL,
			trace     INTEGER NOT NULL,
			first_rec INTEGER NOT NULL,
			n         INTEGER NOT NULL,
			data      BYTEA NOT NULL,
			PRIMARY KEY (run_id, trace, first_rec),
			FOREIGN KEY (run_id, trace) REFERENCES traces (run_id, idx) ON DELETE CASCADE
		)`,
	},
	// 2: sweeps (a base spec and axes) and their cells, one run each.
	{
		`CREATE TABLE sweeps (
			id         TEXT PRIMARY KEY,
			created_us BIGINT NOT NULL,
			status     TEXT NOT NULL,
			base       TEXT NOT NULL,
			axes       TEXT NOT NULL
		)`,
		`CREATE TABLE sweep_cells (
			sweep_id TEXT NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
			idx      INTEGER NOT NULL,
			vals     TEXT NOT NULL,
			run_id   TEXT REFERENCES runs (id) ON DELETE SET NULL,
			PRIMARY KEY (sweep_id, idx)
		)`,
		`CREATE INDEX sweep_cells_run ON sweep_cells (run_id)`,
	},
	// 3: why a run ended as it did, when its traces do not say.
	{
		`ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT ''`,
	},
	// 4: who runs a run that a worker took from the queue (its claim), and
	// when it last said it was alive.
	{
		`ALTER TABLE runs ADD COLUMN claim TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN beat_us BIGINT`,
	},
	// 5: verifications: a stored run re-run here and compared (verify.go).
	{
		`CREATE TABLE verifications (
			id       TEXT PRIMARY KEY,
			run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			at_us    BIGINT NOT NULL,
			outcome  TEXT NOT NULL,
			records  INTEGER NOT NULL DEFAULT 0,
			detail   TEXT NOT NULL DEFAULT '',
			version  TEXT NOT NULL DEFAULT '',
			rerun_id TEXT
		)`,
		`CREATE INDEX verifications_run ON verifications (run_id, at_us)`,
	},
	// 6: when a run entered this store (what Trim orders by: an imported
	// bundle's own dates may lie in the future). Existing runs entered
	// when they were created, or now if that lies in the future.
	{
		`ALTER TABLE runs ADD COLUMN entered_us BIGINT`,
		`UPDATE runs SET entered_us = LEAST(created_us, (EXTRACT(EPOCH FROM now()) * 1000000)::BIGINT)`,
		`ALTER TABLE runs ALTER COLUMN entered_us SET NOT NULL`,
		`CREATE INDEX runs_entered ON runs (entered_us, id)`,
	},
	// 7: a sweep's name, note and star, as a run's.
	{
		`ALTER TABLE sweeps ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE sweeps ADD COLUMN note TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE sweeps ADD COLUMN starred BOOLEAN NOT NULL DEFAULT FALSE`,
	},
	// 8: the content digest of an imported bundle (import.go): one run per
	// bundle, however often and however concurrently it is imported.
	{
		`ALTER TABLE runs ADD COLUMN digest TEXT`,
		`CREATE UNIQUE INDEX runs_digest ON runs (digest) WHERE digest IS NOT NULL`,
	},
	// 9: pause, step and resume of a run on a worker (control.go): the
	// steps granted since it was claimed, when it was paused (or last
	// stepped) on the database's clock, and the pause timeout of the
	// server that paused it.
	{
		`ALTER TABLE runs ADD COLUMN steps BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN paused_us BIGINT`,
		`ALTER TABLE runs ADD COLUMN pause_timeout_us BIGINT NOT NULL DEFAULT 0`,
	},
	// 10: data that travels with a run to its worker (datafiles.go): the
	// files kept in the store by their SHA-256, and each run's references
	// to its data files.
	{
		`CREATE TABLE data_files (
			sha256     TEXT PRIMARY KEY,
			bytes      BIGINT NOT NULL,
			data       BYTEA NOT NULL,
			created_us BIGINT NOT NULL
		)`,
		`ALTER TABLE runs ADD COLUMN data_refs TEXT`,
	},
	// 11: History at a million runs (as the SQLite schema's 7): indexes in
	// list order (id in the "C" collation the lists sort by), alone and
	// by problem, status or both; run_algos, the algorithms each run is
	// filed under (each trace's algorithm and, for a variant, the
	// algorithm it varies), in list order, kept by triggers; and trigram
	// indexes (pg_trgm, a trusted extension) of the lowered names and
	// notes for the search's LIKE. Where pg_trgm cannot be installed, the
	// search reads the runs as before.
	{
		`DROP INDEX runs_status`,
		`DROP INDEX runs_problem`,
		`CREATE INDEX runs_listed ON runs (created_us, id COLLATE "C")`,
		`CREATE INDEX runs_listed_problem ON runs (problem, created_us, id COLLATE "C")`,
		`CREATE INDEX runs_listed_status ON runs (status, created_us, id COLLATE "C")`,
		`CREATE INDEX runs_listed_problem_status ON runs (problem, status, created_us, id COLLATE "C")`,
		`CREATE TABLE run_algos (
			algo   TEXT NOT NULL,
			at_us  BIGINT NOT NULL,
			run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			PRIMARY KEY (algo, at_us, run_id)
		)`,
		`CREATE INDEX run_algos_run ON run_algos (run_id)`,
		`CREATE FUNCTION fwlab_file_run_algos(rid TEXT) RETURNS void LANGUAGE sql AS $$
			DELETE FROM run_algos WHERE run_id = rid;
			INSERT INTO run_algos (algo, at_us, run_id)
				SELECT DISTINCT n.algo, r.created_us, r.id
				FROM (SELECT algo FROM traces WHERE run_id = rid
					UNION SELECT split_part(algo, ' + ', 1) FROM traces WHERE run_id = rid AND strpos(algo, ' + ') > 0) n,
					runs r
				WHERE r.id = rid
		$$`,
		`CREATE FUNCTION fwlab_traces_algos() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM fwlab_file_run_algos(NEW.run_id);
			IF TG_OP = 'UPDATE' AND OLD.run_id <> NEW.run_id THEN
				PERFORM fwlab_file_run_algos(OLD.run_id);
			END IF;
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER traces_algos AFTER INSERT OR UPDATE OF algo, run_id ON traces
			FOR EACH ROW EXECUTE FUNCTION fwlab_traces_algos()`,
		`CREATE FUNCTION fwlab_runs_algos() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM fwlab_file_run_algos(NEW.id);
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER runs_algos AFTER UPDATE OF created_us ON runs
			FOR EACH ROW EXECUTE FUNCTION fwlab_runs_algos()`,
		`INSERT INTO run_algos (algo, at_us, run_id)
			SELECT DISTINCT n.algo, r.created_us, r.id
			FROM (SELECT run_id, algo FROM traces
				UNION SELECT run_id, split_part(algo, ' + ', 1) FROM traces WHERE strpos(algo, ' + ') > 0) n
			JOIN runs r ON r.id = n.run_id`,
		`DO $$ BEGIN
			CREATE EXTENSION IF NOT EXISTS pg_trgm;
		EXCEPTION WHEN OTHERS THEN
			RAISE NOTICE 'fwlab: pg_trgm is not available (%), History''s search reads every run', SQLERRM;
		END $$`,
		`DO $$ BEGIN
			IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
				CREATE INDEX runs_name_trgm ON runs USING gin (LOWER(name) gin_trgm_ops);
				CREATE INDEX runs_note_trgm ON runs USING gin (LOWER(note) gin_trgm_ops);
			END IF;
		END $$`,
	},
	// 12: each upload kept in the store is charged to the client that sent
	// it first (client, '' for a file of `dashboard submit`), and named
	// says a run has named it since it was last kept: such a file goes
	// with the last run naming it, one never named after its grace
	// (datafiles.go).
	{
		`ALTER TABLE data_files ADD COLUMN client TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE data_files ADD COLUMN named BOOLEAN NOT NULL DEFAULT false`,
		`UPDATE data_files d SET named = true WHERE EXISTS (SELECT 1 FROM (` + namedSQL + `) n WHERE n.sha256 = d.sha256)`,
		`CREATE INDEX data_files_client ON data_files (client)`,
	},
	// 13: the name each upload was sent with, by its content's SHA-256
	// (uploadnames.go, as the SQLite schema's 9): what a message about the
	// file calls it on every server sharing the database; a name goes
	// with its data file (reclaimIn).
	{
		`CREATE TABLE upload_names (
			sha256 TEXT PRIMARY KEY,
			name   TEXT NOT NULL,
			at_us  BIGINT NOT NULL
		)`,
		`CREATE INDEX upload_names_short ON upload_names (left(sha256, 12))`,
	},
	// 14: runs opened from outside (docs/live.md): the mark, and the
	// SHA-256 of the write token the run was opened with (never the
	// token itself).
	{
		`ALTER TABLE runs ADD COLUMN outside BOOLEAN NOT NULL DEFAULT false`,
		`ALTER TABLE runs ADD COLUMN token_hash BYTEA`,
	},
	// 15: run_algos carries its run's problem and status, and
	// run_count_deltas counts the runs by problem and status (algo '')
	// and run_algos by algorithm, problem and status: triggers add a
	// row of +1 or -1 for each run or entry that comes, goes or changes
	// (rows added, never updated, so that writers never wait on one
	// another), and the store folds the rows into one per key now and
	// then (compactCounts). The count of a page filtered by an algorithm,
	// a problem and a status at most sums a few rows, not a million
	// index entries.
	{
		`ALTER TABLE run_algos ADD COLUMN problem TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE run_algos ADD COLUMN status TEXT NOT NULL DEFAULT ''`,
		`UPDATE run_algos ra SET problem = r.problem, status = r.status FROM runs r WHERE r.id = ra.run_id COLLATE "default"`,
		`CREATE OR REPLACE FUNCTION fwlab_file_run_algos(rid TEXT) RETURNS void LANGUAGE sql AS $$
			DELETE FROM run_algos WHERE run_id = rid;
			INSERT INTO run_algos (algo, at_us, run_id, problem, status)
				SELECT DISTINCT n.algo, r.created_us, r.id, r.problem, r.status
				FROM (SELECT algo FROM traces WHERE run_id = rid
					UNION SELECT split_part(algo, ' + ', 1) FROM traces WHERE run_id = rid AND strpos(algo, ' + ') > 0) n,
					runs r
				WHERE r.id = rid
		$$`,
		`CREATE FUNCTION fwlab_runs_filter() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			UPDATE run_algos SET problem = NEW.problem, status = NEW.status WHERE run_id = NEW.id COLLATE "C";
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER runs_filter AFTER UPDATE OF problem, status ON runs
			FOR EACH ROW WHEN (OLD.problem <> NEW.problem OR OLD.status <> NEW.status) EXECUTE FUNCTION fwlab_runs_filter()`,
		`CREATE TABLE run_count_deltas (
			algo    TEXT NOT NULL,
			problem TEXT NOT NULL,
			status  TEXT NOT NULL,
			n       BIGINT NOT NULL
		)`,
		`CREATE INDEX run_count_deltas_key ON run_count_deltas (algo, problem, status)`,
		`INSERT INTO run_count_deltas (algo, problem, status, n)
			SELECT '', problem, status, COUNT(*) FROM runs GROUP BY problem, status
			UNION ALL SELECT algo, problem, status, COUNT(*) FROM run_algos GROUP BY algo, problem, status`,
		`CREATE FUNCTION fwlab_count_runs() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF TG_OP <> 'INSERT' THEN
				INSERT INTO run_count_deltas (algo, problem, status, n) VALUES ('', OLD.problem, OLD.status, -1);
			END IF;
			IF TG_OP <> 'DELETE' THEN
				INSERT INTO run_count_deltas (algo, problem, status, n) VALUES ('', NEW.problem, NEW.status, 1);
			END IF;
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER runs_count AFTER INSERT OR DELETE OR UPDATE OF problem, status ON runs
			FOR EACH ROW EXECUTE FUNCTION fwlab_count_runs()`,
		`CREATE FUNCTION fwlab_count_run_algos() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF TG_OP <> 'INSERT' THEN
				INSERT INTO run_count_deltas (algo, problem, status, n) VALUES (OLD.algo, OLD.problem, OLD.status, -1);
			END IF;
			IF TG_OP <> 'DELETE' THEN
				INSERT INTO run_count_deltas (algo, problem, status, n) VALUES (NEW.algo, NEW.problem, NEW.status, 1);
			END IF;
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER run_algos_count AFTER INSERT OR DELETE OR UPDATE ON run_algos
			FOR EACH ROW EXECUTE FUNCTION fwlab_count_run_algos()`,
	},
}

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key that serialises the migrations of
// processes starting at once (a server and its workers).
const migrationLock = 0x66776c6162 // "fwlab"

// migrateTo brings the database to schema version target, one version per
// transaction.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, target int) error {
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS fwlab_schema (version INTEGER NOT NULL)`); err != nil {
		// two processes creating the table at once: one wins, the other's
		// error is harmless if the table is there now
		var one int
		if err2 := pool.QueryRow(ctx, `SELECT 1 FROM fwlab_schema LIMIT 1`).Scan(&one); err2 != nil && !errors.Is(err2, pgx.ErrNoRows) {
			return fmt.Errorf("creating the schema version table: %w", err)
		}
	}
	for {
		done, err := migrateStep(ctx, pool, target)
		if err != nil || done {
			return err
		}
	}
}

// migrationIdle is IdleInTransaction for a migration's transaction: a
// process that starts on a busy machine (several processes opening the
// store at once, each waiting for the CPU between two statements) must not
// lose its connection for a pause of IdleInTransaction; a process frozen
// mid-migration still frees the migration lock within this time.
const migrationIdle = 30 * time.Second

func migrateStep(ctx context.Context, pool *pgxpool.Pool, target int) (done bool, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	// the session's own timeout for this transaction only: set before it
	// begins (a pause between BEGIN and a SET LOCAL would be met by the
	// pool's), and reset to the connection's after it ends
	if _, err := conn.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, false)`, fmt.Sprint(migrationIdle.Milliseconds())); err != nil {
		return false, err
	}
	defer func() {
		if _, rerr := conn.Exec(context.Background(), `RESET idle_in_transaction_session_timeout`); rerr != nil {
			conn.Conn().Close(context.Background()) // not back to the pool with the long timeout
		}
	}()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return false, fmt.Errorf("waiting for the migration lock: %w", err)
	}
	v, err := version(ctx, tx)
	if err != nil {
		return false, err
	}
	if v > len(migrations) {
		return false, fmt.Errorf("schema version %d is newer than this fwlab's (%d): use a newer fwlab or another database", v, len(migrations))
	}
	if v >= target {
		return true, nil
	}
	for _, stmt := range migrations[v] {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return false, fmt.Errorf("migrating to schema version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM fwlab_schema`); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO fwlab_schema (version) VALUES ($1)`, v+1); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migrating to schema version %d: %w", v+1, err)
	}
	return false, nil
}

func version(ctx context.Context, q pgx.Tx) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT version FROM fwlab_schema`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}
