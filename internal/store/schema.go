package store

// migrations[i] takes a database from schema version i to i+1 (PRAGMA
// user_version). A released migration is never edited: a change to the
// schema is a new entry at the end, and TestOpensEveryEarlierVersion builds a
// database at every earlier version, fills it, and opens it with the current
// code.
//
// The SQL is kept portable (SQLite and PostgreSQL read it alike): TEXT,
// INTEGER, BIGINT, DOUBLE PRECISION and BLOB (BYTEA in PostgreSQL) columns,
// explicit keys, no AUTOINCREMENT, times as BIGINT microseconds since the
// Unix epoch (UTC).
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
			starred     INTEGER NOT NULL DEFAULT 0,
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
			data      BLOB NOT NULL,
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
	// 3: why a run ended as it did, when its traces do not say (a pause
	// that outlived the pause timeout).
	{
		`ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT ''`,
	},
	// 4: when a run entered this store (what -keep orders by: an imported
	// bundle's own dates may lie in the future), NULL while an import is
	// still streaming in (such a run is invisible); the digest of an
	// imported bundle (a second import of it returns the first run); and a
	// table the health probe writes to. Existing runs entered when they were
	// created, or now if that lies in the future (SQLite's MIN and
	// strftime: a PostgreSQL schema starts at this version with its own
	// SQL).
	{
		`ALTER TABLE runs ADD COLUMN entered_us BIGINT`,
		`UPDATE runs SET entered_us = MIN(created_us, CAST(strftime('%s', 'now') AS INTEGER) * 1000000)`,
		`CREATE INDEX runs_entered ON runs (entered_us, id)`,
		`ALTER TABLE runs ADD COLUMN digest TEXT`,
		`CREATE INDEX runs_digest ON runs (digest)`,
		`CREATE TABLE write_probe (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`,
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
	// 6: a sweep's name, note and star, as a run's.
	{
		`ALTER TABLE sweeps ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE sweeps ADD COLUMN note TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE sweeps ADD COLUMN starred INTEGER NOT NULL DEFAULT 0`,
	},
}

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)
