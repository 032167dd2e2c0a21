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
	// 7: History at a million runs. Partial indexes of the listed runs
	// (entered_us set) in list order, alone and by problem, status or
	// both, so that a page and its count read an index only; run_algos,
	// the algorithms each listed run is filed under (each trace's
	// algorithm and, for a variant, the algorithm it varies: VariantSep),
	// in list order, kept by triggers; runs_text, a trigram full-text index
	// (FTS5) of the names and notes of the listed runs that have one, for
	// the search's LIKE, its rows numbered by run_text_rows (a run's rowid
	// may change in a VACUUM), kept by triggers. SQLite only: PostgreSQL's schema
	// has its own SQL.
	{
		`DROP INDEX runs_status`,
		`DROP INDEX runs_problem`,
		`CREATE INDEX runs_listed ON runs (created_us, id) WHERE entered_us IS NOT NULL`,
		`CREATE INDEX runs_listed_problem ON runs (problem, created_us, id) WHERE entered_us IS NOT NULL`,
		`CREATE INDEX runs_listed_status ON runs (status, created_us, id) WHERE entered_us IS NOT NULL`,
		`CREATE INDEX runs_listed_problem_status ON runs (problem, status, created_us, id) WHERE entered_us IS NOT NULL`,
		`CREATE TABLE run_algos (
			algo   TEXT NOT NULL,
			at_us  BIGINT NOT NULL,
			run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			PRIMARY KEY (algo, at_us, run_id)
		) WITHOUT ROWID`,
		`CREATE INDEX run_algos_run ON run_algos (run_id)`,
		`CREATE VIEW run_algo_names AS
			SELECT run_id, algo FROM traces
			UNION SELECT run_id, substr(algo, 1, instr(algo, ' + ') - 1) FROM traces WHERE instr(algo, ' + ') > 0`,
		`INSERT INTO run_algos (algo, at_us, run_id)
			SELECT n.algo, r.created_us, r.id FROM run_algo_names n JOIN runs r ON r.id = n.run_id WHERE r.entered_us IS NOT NULL`,
		`CREATE TRIGGER run_algos_trace_insert AFTER INSERT ON traces BEGIN
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id)
				SELECT NEW.algo, created_us, id FROM runs WHERE id = NEW.run_id AND entered_us IS NOT NULL;
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id)
				SELECT substr(NEW.algo, 1, instr(NEW.algo, ' + ') - 1), created_us, id FROM runs
				WHERE id = NEW.run_id AND entered_us IS NOT NULL AND instr(NEW.algo, ' + ') > 0;
		END`,
		`CREATE TRIGGER run_algos_trace_update AFTER UPDATE OF algo, run_id ON traces BEGIN
			DELETE FROM run_algos WHERE run_id IN (OLD.run_id, NEW.run_id);
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id)
				SELECT n.algo, r.created_us, r.id FROM run_algo_names n JOIN runs r ON r.id = n.run_id
				WHERE n.run_id IN (OLD.run_id, NEW.run_id) AND r.entered_us IS NOT NULL;
		END`,
		`CREATE TRIGGER run_algos_run_update AFTER UPDATE OF id, created_us, entered_us ON runs BEGIN
			DELETE FROM run_algos WHERE run_id IN (OLD.id, NEW.id);
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id)
				SELECT algo, NEW.created_us, NEW.id FROM run_algo_names WHERE run_id = NEW.id AND NEW.entered_us IS NOT NULL;
		END`,
		`CREATE TABLE run_text_rows (
			rid    INTEGER PRIMARY KEY,
			run_id TEXT NOT NULL UNIQUE REFERENCES runs (id) ON DELETE CASCADE
		)`,
		`CREATE VIRTUAL TABLE runs_text USING fts5(name, note, tokenize = 'trigram case_sensitive 0')`,
		`INSERT INTO run_text_rows (run_id)
			SELECT id FROM runs WHERE entered_us IS NOT NULL AND (name <> '' OR note <> '')`,
		`INSERT INTO runs_text (rowid, name, note)
			SELECT m.rid, r.name, r.note FROM run_text_rows m JOIN runs r ON r.id = m.run_id`,
		`CREATE TRIGGER runs_text_insert AFTER INSERT ON runs WHEN NEW.entered_us IS NOT NULL AND (NEW.name <> '' OR NEW.note <> '') BEGIN
			INSERT INTO run_text_rows (run_id) VALUES (NEW.id);
			INSERT INTO runs_text (rowid, name, note) VALUES (last_insert_rowid(), NEW.name, NEW.note);
		END`,
		`CREATE TRIGGER runs_text_update AFTER UPDATE OF id, name, note, entered_us ON runs BEGIN
			DELETE FROM runs_text WHERE rowid IN (SELECT rid FROM run_text_rows WHERE run_id IN (OLD.id, NEW.id));
			DELETE FROM run_text_rows WHERE run_id IN (OLD.id, NEW.id);
			INSERT INTO run_text_rows (run_id)
				SELECT NEW.id WHERE NEW.entered_us IS NOT NULL AND (NEW.name <> '' OR NEW.note <> '');
			INSERT INTO runs_text (rowid, name, note)
				SELECT rid, NEW.name, NEW.note FROM run_text_rows WHERE run_id = NEW.id;
		END`,
		`CREATE TRIGGER runs_text_delete BEFORE DELETE ON runs WHEN OLD.name <> '' OR OLD.note <> '' BEGIN
			DELETE FROM runs_text WHERE rowid IN (SELECT rid FROM run_text_rows WHERE run_id = OLD.id);
			DELETE FROM run_text_rows WHERE run_id = OLD.id;
		END`,
	},
	// 8: how many listed runs each (problem, status) pair has, kept by
	// triggers: the count of a page filtered by nothing but its problem
	// and status reads this table, not a million index entries.
	{
		`CREATE TABLE run_counts (
			problem TEXT NOT NULL,
			status  TEXT NOT NULL,
			n       BIGINT NOT NULL,
			PRIMARY KEY (problem, status)
		) WITHOUT ROWID`,
		`INSERT INTO run_counts (problem, status, n)
			SELECT problem, status, COUNT(*) FROM runs WHERE entered_us IS NOT NULL GROUP BY problem, status`,
		`CREATE TRIGGER run_counts_insert AFTER INSERT ON runs WHEN NEW.entered_us IS NOT NULL BEGIN
			INSERT INTO run_counts (problem, status, n) VALUES (NEW.problem, NEW.status, 1)
				ON CONFLICT (problem, status) DO UPDATE SET n = n + 1;
		END`,
		`CREATE TRIGGER run_counts_delete AFTER DELETE ON runs WHEN OLD.entered_us IS NOT NULL BEGIN
			UPDATE run_counts SET n = n - 1 WHERE problem = OLD.problem AND status = OLD.status;
		END`,
		`CREATE TRIGGER run_counts_update AFTER UPDATE OF problem, status, entered_us ON runs BEGIN
			UPDATE run_counts SET n = n - 1
				WHERE OLD.entered_us IS NOT NULL AND problem = OLD.problem AND status = OLD.status;
			INSERT INTO run_counts (problem, status, n) SELECT NEW.problem, NEW.status, 1 WHERE NEW.entered_us IS NOT NULL
				ON CONFLICT (problem, status) DO UPDATE SET n = n + 1;
		END`,
	},
	// 9: the name each upload was sent with, by its content's SHA-256
	// (uploadnames.go): what a message about the file calls it, on every
	// server sharing the store and after a restart.
	{
		`CREATE TABLE upload_names (
			sha256 TEXT PRIMARY KEY,
			name   TEXT NOT NULL,
			at_us  BIGINT NOT NULL
		) WITHOUT ROWID`,
		`CREATE INDEX upload_names_short ON upload_names (substr(sha256, 1, 12))`,
	},
	// 10: runs opened from outside (docs/live.md): the mark, and the
	// SHA-256 of the write token the run was opened with (never the
	// token itself).
	{
		`ALTER TABLE runs ADD COLUMN outside INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN token_hash BLOB`,
	},
	// 11: run_algos carries its run's problem and status (kept by the
	// triggers that file it and by one on the runs' problem and status),
	// and run_algo_counts, kept by triggers on run_algos, has how many
	// listed runs each (algorithm, problem, status) has: the count of a
	// page filtered by an algorithm, and by its problem and status at
	// most, reads it, not hundreds of thousands of index entries; and
	// run_text_rows carries its run's time.
	{
		`ALTER TABLE run_algos ADD COLUMN problem TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE run_algos ADD COLUMN status TEXT NOT NULL DEFAULT ''`,
		`UPDATE run_algos SET problem = (SELECT problem FROM runs WHERE id = run_algos.run_id),
			status = (SELECT status FROM runs WHERE id = run_algos.run_id)`,
		`DROP TRIGGER run_algos_trace_insert`,
		`DROP TRIGGER run_algos_trace_update`,
		`DROP TRIGGER run_algos_run_update`,
		`CREATE TRIGGER run_algos_trace_insert AFTER INSERT ON traces BEGIN
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id, problem, status)
				SELECT NEW.algo, created_us, id, problem, status FROM runs WHERE id = NEW.run_id AND entered_us IS NOT NULL;
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id, problem, status)
				SELECT substr(NEW.algo, 1, instr(NEW.algo, ' + ') - 1), created_us, id, problem, status FROM runs
				WHERE id = NEW.run_id AND entered_us IS NOT NULL AND instr(NEW.algo, ' + ') > 0;
		END`,
		`CREATE TRIGGER run_algos_trace_update AFTER UPDATE OF algo, run_id ON traces BEGIN
			DELETE FROM run_algos WHERE run_id IN (OLD.run_id, NEW.run_id);
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id, problem, status)
				SELECT n.algo, r.created_us, r.id, r.problem, r.status FROM run_algo_names n JOIN runs r ON r.id = n.run_id
				WHERE n.run_id IN (OLD.run_id, NEW.run_id) AND r.entered_us IS NOT NULL;
		END`,
		`CREATE TRIGGER run_algos_run_update AFTER UPDATE OF id, created_us, entered_us ON runs BEGIN
			DELETE FROM run_algos WHERE run_id IN (OLD.id, NEW.id);
			INSERT OR IGNORE INTO run_algos (algo, at_us, run_id, problem, status)
				SELECT algo, NEW.created_us, NEW.id, NEW.problem, NEW.status FROM run_algo_names WHERE run_id = NEW.id AND NEW.entered_us IS NOT NULL;
		END`,
		`CREATE TRIGGER run_algos_run_filter AFTER UPDATE OF problem, status ON runs BEGIN
			UPDATE run_algos SET problem = NEW.problem, status = NEW.status WHERE run_id = NEW.id;
		END`,
		`CREATE TABLE run_algo_counts (
			algo    TEXT NOT NULL,
			problem TEXT NOT NULL,
			status  TEXT NOT NULL,
			n       BIGINT NOT NULL,
			PRIMARY KEY (algo, problem, status)
		) WITHOUT ROWID`,
		`INSERT INTO run_algo_counts (algo, problem, status, n)
			SELECT algo, problem, status, COUNT(*) FROM run_algos GROUP BY algo, problem, status`,
		`CREATE TRIGGER run_algo_counts_insert AFTER INSERT ON run_algos BEGIN
			INSERT INTO run_algo_counts (algo, problem, status, n) VALUES (NEW.algo, NEW.problem, NEW.status, 1)
				ON CONFLICT (algo, problem, status) DO UPDATE SET n = n + 1;
		END`,
		`CREATE TRIGGER run_algo_counts_delete AFTER DELETE ON run_algos BEGIN
			UPDATE run_algo_counts SET n = n - 1 WHERE algo = OLD.algo AND problem = OLD.problem AND status = OLD.status;
		END`,
		`CREATE TRIGGER run_algo_counts_update AFTER UPDATE OF algo, problem, status ON run_algos BEGIN
			UPDATE run_algo_counts SET n = n - 1 WHERE algo = OLD.algo AND problem = OLD.problem AND status = OLD.status;
			INSERT INTO run_algo_counts (algo, problem, status, n) VALUES (NEW.algo, NEW.problem, NEW.status, 1)
				ON CONFLICT (algo, problem, status) DO UPDATE SET n = n + 1;
		END`,
		// run_text_rows carries its run's time: a search sorts the runs
		// it found without reading them
		`ALTER TABLE run_text_rows ADD COLUMN at_us BIGINT NOT NULL DEFAULT 0`,
		`UPDATE run_text_rows SET at_us = (SELECT created_us FROM runs WHERE id = run_text_rows.run_id)`,
		`DROP TRIGGER runs_text_insert`,
		`DROP TRIGGER runs_text_update`,
		`CREATE TRIGGER runs_text_insert AFTER INSERT ON runs WHEN NEW.entered_us IS NOT NULL AND (NEW.name <> '' OR NEW.note <> '') BEGIN
			INSERT INTO run_text_rows (run_id, at_us) VALUES (NEW.id, NEW.created_us);
			INSERT INTO runs_text (rowid, name, note) VALUES (last_insert_rowid(), NEW.name, NEW.note);
		END`,
		`CREATE TRIGGER runs_text_update AFTER UPDATE OF id, name, note, entered_us ON runs BEGIN
			DELETE FROM runs_text WHERE rowid IN (SELECT rid FROM run_text_rows WHERE run_id IN (OLD.id, NEW.id));
			DELETE FROM run_text_rows WHERE run_id IN (OLD.id, NEW.id);
			INSERT INTO run_text_rows (run_id, at_us)
				SELECT NEW.id, NEW.created_us WHERE NEW.entered_us IS NOT NULL AND (NEW.name <> '' OR NEW.note <> '');
			INSERT INTO runs_text (rowid, name, note)
				SELECT rid, NEW.name, NEW.note FROM run_text_rows WHERE run_id = NEW.id;
		END`,
		`CREATE TRIGGER runs_text_at AFTER UPDATE OF created_us ON runs BEGIN
			UPDATE run_text_rows SET at_us = NEW.created_us WHERE run_id = NEW.id;
		END`,
	},
}

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)
