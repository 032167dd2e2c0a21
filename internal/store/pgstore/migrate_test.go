package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
	"math/rand/v2"
)

const oldSpec = `{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}`

// oldVersions fills a database at an earlier schema version, written with
// that version's SQL, and returns a check of what the current code reads
// from it. A new schema version adds an entry for the version before it
// (the test fails until it does).
// oldSweep fills a database at version v (before sweeps had a name, a
// note and a star) with a sweep, and checks that it reads and takes an edit.
func oldSweep(v int, id string) func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
	return func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		exec(t, pool, `INSERT INTO sweeps (id, created_us, status, base, axes) VALUES ($2, 1767225600000000, 'done', $1, '[]')`, oldSpec, id)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			sw, err := s.GetSweep(ctx, id)
			if err != nil || sw.Name != "" || sw.Starred {
				t.Fatalf("v%d sweep read as %+v, %v", v, sw, err)
			}
			name, yes := "ρ study", true
			if err := s.UpdateSweep(ctx, sw.ID, store.Edit{Name: &name, Starred: &yes}); err != nil {
				t.Fatal(err)
			}
			if sw, err := s.GetSweep(ctx, sw.ID); err != nil || sw.Name != name || !sw.Starred {
				t.Errorf("v%d sweep after an edit: %+v, %v", v, sw, err)
			}
		}
	}
}

var oldVersions = map[int]func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store){
	14: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// runs of two problems, three statuses and three algorithms
		// (one a variant), filed by version 12's triggers
		for i, q := range []string{"lasso done afw", "lasso done fw", "lasso failed afw+", "gflasso done afw", "gflasso cancelled fw"} {
			f := strings.Fields(q)
			id := fmt.Sprintf("ppppppppppp%c", 'a'+i)
			exec(t, pool, `INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us) VALUES ($1, $2, $3, $4, $5, 'v0.12', 1767225600000000)`,
				id, 1767225600000000+i, f[1], f[0], oldSpec)
			exec(t, pool, `INSERT INTO traces (run_id, idx, algo, replication, seed, status, records) VALUES ($1, 0, $2, 0, 1, $3, 0)`,
				id, strings.Replace(f[2], "+", " + slack collapse", 1), f[1])
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			// every total from run_count_deltas equals the runs the
			// filter lists, before and after the rows are folded
			check := func(when string) {
				t.Helper()
				for _, fold := range []bool{false, true} {
					if fold {
						s.counted.Store(0)
						s.compactCounts(ctx)
					}
					for _, algo := range []string{"", "afw", "fw", "afw + slack collapse", "pfw"} {
						for _, f := range []store.Filter{{}, {Problem: "lasso"}, {Problem: "gflasso"}, {Status: store.StatusDone}, {Status: store.StatusFailed},
							{Problem: "lasso", Status: store.StatusDone}, {Problem: "gflasso", Status: store.StatusCancelled}, {Problem: "nothing"}} {
							f.Algorithm, f.Limit = algo, store.MaxLimit
							runs, total, err := s.List(ctx, f)
							if err != nil {
								t.Fatal(err)
							}
							if total != len(runs) {
								t.Errorf("%s (folded %v), %+v: total %d, %d runs listed", when, fold, f, total, len(runs))
							}
						}
					}
				}
				var rows, keys int
				if err := s.pool.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT (algo, problem, status)) FROM run_count_deltas`).Scan(&rows, &keys); err != nil || rows != keys {
					t.Errorf("%s: %d rows of counts for %d keys after a fold (%v)", when, rows, keys, err)
				}
			}
			check("after the migration")
			if _, err := s.PutRun(ctx, storetest.TestRun("gflasso", "afw", "pfw")); err != nil {
				t.Fatal(err)
			}
			if err := s.SetStatus(ctx, "pppppppppppa", store.StatusFailed, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(ctx, "pppppppppppd"); err != nil {
				t.Fatal(err)
			}
			exec(t, s.pool, `UPDATE traces SET algo = 'pfw' WHERE run_id = 'pppppppppppb'`)
			check("after a new run, a status change, a delete and a trace's algorithm changed")
			if _, total, _ := s.List(ctx, store.Filter{Algorithm: "afw", Status: store.StatusFailed}); total != 2 {
				t.Errorf("afw failed: %d runs, want 2 (a, c's variant)", total)
			}
		}
	},
	13: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// a run made before runs could be opened from outside
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, entered_us) VALUES
			('oooooooooooo', 1767225600000000, 1767225601000000, 'done', 'lasso', $1, 'v0.13', 1767225600000000)`, oldSpec)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			r, err := s.Get(ctx, "oooooooooooo")
			if err != nil || r.Outside || r.Spec.Outside {
				t.Fatalf("the v13 run: %v %+v", err, r)
			}
			// a run opened from outside is marked, its token's hash kept
			sr := &store.Run{Spec: spec.Run{Problem: "my problem", Outside: true, Algorithms: []spec.Algo{{Algo: "pgd"}}, Replications: 1, Iters: 10},
				Status: store.StatusRunning, Version: "test", Traces: []store.Trace{{Algo: "pgd"}}, TokenHash: []byte("0123456789abcdef0123456789abcdef")}
			id, err := s.PutRun(ctx, sr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, id)
			if err != nil || !got.Outside {
				t.Fatalf("the outside run: %v %+v", err, got)
			}
			var hash []byte
			if err := s.pool.QueryRow(ctx, `SELECT token_hash FROM runs WHERE id = $1`, id).Scan(&hash); err != nil || string(hash) != string(sr.TokenHash) {
				t.Errorf("the stored token hash: %v %q", err, hash)
			}
		}
	},
	12: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// uploads kept before they had names: one a run names, one no run
		// named, past any grace
		named, old := SHA256([]byte("named")), SHA256([]byte("old"))
		exec(t, pool, `INSERT INTO data_files (sha256, bytes, data, created_us, client, named) VALUES
			($1, 5, 'named', $3, '10.0.0.1', true), ($2, 3, 'old', 1767225600000000, '10.0.0.1', false)`, named, old, time.Now().UnixMicro())
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, entered_us, data_refs) VALUES
			('kkkkkkkkkkkk', 1767225600000000, 1767225601000000, 'failed', 'lasso', $1, 'v0.12', 1767225600000000, $2)`,
			oldSpec, `[{"param":"x","name":"upload:x","sha256":"`+named+`","bytes":5,"stored":true}]`)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			for sum, name := range map[string]string{named: "x.csv", old: "old.csv"} {
				if err := s.SetUploadName(ctx, sum, name); err != nil {
					t.Fatal(err)
				}
			}
			// the name of a file the store removes goes with it
			if files, _, err := s.ReclaimDataFiles(ctx); err != nil || files != 1 {
				t.Fatalf("reclaiming a v12 store's data files: %d, %v; want the old one", files, err)
			}
			got, err := s.UploadNames(ctx, []string{named, old})
			if err != nil || len(got) != 1 || got[named] != "x.csv" {
				t.Errorf("a v12 store's upload names after the old file went: %v, %v; want only x.csv", got, err)
			}
		}
	},
	11: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// data files kept before they were charged to clients: one a run
		// names, one no run names yet (both kept just now)
		at := time.Now().UnixMicro()
		exec(t, pool, `INSERT INTO data_files (sha256, bytes, data, created_us) VALUES
			('`+SHA256([]byte("named"))+`', 5, 'named', $1), ('`+SHA256([]byte("fresh"))+`', 5, 'fresh', $1)`, at)
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, entered_us, data_refs) VALUES
			('jjjjjjjjjjjj', 1767225600000000, 1767225601000000, 'done', 'lasso', $1, 'v0.11', 1767225600000000, $2)`,
			oldSpec, `[{"param":"x","name":"upload:x","sha256":"`+SHA256([]byte("named"))+`","bytes":5,"stored":true}]`)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			// the file its run named goes with it at once; the fresh one stays
			if _, err := s.Delete(ctx, "jjjjjjjjjjjj"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.DataFile(ctx, SHA256([]byte("named"))); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a v11 file after its run was deleted: %v", err)
			}
			if _, err := s.DataFile(ctx, SHA256([]byte("fresh"))); err != nil {
				t.Errorf("a v11 file no run named yet: %v", err)
			}
			// a client's quota counts only its own files
			if _, err := s.PutUpload(ctx, []byte("abcdef"), "10.0.0.1", 0, 6, time.Hour); err != nil {
				t.Errorf("a client's first file beside the old ones: %v", err)
			}
		}
	},
	10: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// runs filed before History's indexes: a named run of a variant, a
		// noted run of another algorithm
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, entered_us) VALUES
			('hhhhhhhhhhhh', 1767225600000000, 1767225601000000, 'done', 'lasso', $1, 'v0.10', 'Curvature Baseline', 1767225600000000)`, oldSpec)
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, note, entered_us) VALUES
			('iiiiiiiiiiii', 1767225700000000, 1767225701000000, 'failed', 'gflasso', $1, 'v0.10', 'diverged at k = 40', 1767225700000000)`, oldSpec)
		exec(t, pool, `INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES
			('hhhhhhhhhhhh', 0, 'afw + slack collapse', 0, 3, 'done'), ('iiiiiiiiiiii', 0, 'pfw', 0, 3, 'failed')`)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			list := func(f store.Filter) string {
				t.Helper()
				runs, total, err := s.List(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, r := range runs {
					ids = append(ids, r.ID)
				}
				if total != len(ids) {
					t.Errorf("%+v: total %d, %d runs listed", f, total, len(ids))
				}
				return fmt.Sprint(ids)
			}
			for _, c := range []struct {
				f    store.Filter
				want string
			}{
				{store.Filter{Algorithm: "afw"}, "[hhhhhhhhhhhh]"},
				{store.Filter{Algorithm: "afw + slack collapse"}, "[hhhhhhhhhhhh]"},
				{store.Filter{Algorithm: "pfw", Status: store.StatusFailed}, "[iiiiiiiiiiii]"},
				{store.Filter{Text: "CURVATURE"}, "[hhhhhhhhhhhh]"},
				{store.Filter{Text: "k = 4"}, "[iiiiiiiiiiii]"},
				{store.Filter{Problem: "lasso"}, "[hhhhhhhhhhhh]"},
				{store.Filter{}, "[iiiiiiiiiiii hhhhhhhhhhhh]"},
			} {
				if got := list(c.f); got != c.want {
					t.Errorf("v10 store, %+v: %s, want %s", c.f, got, c.want)
				}
			}
			// run_algos follows new runs and deletes
			id, err := s.PutRun(ctx, storetest.TestRun("lasso", "afw + slack collapse"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := list(store.Filter{Algorithm: "afw"}), "["+id+" hhhhhhhhhhhh]"; got != want {
				t.Errorf("with a new run, algorithm afw: %s, want %s", got, want)
			}
			if _, err := s.Delete(ctx, "hhhhhhhhhhhh"); err != nil {
				t.Fatal(err)
			}
			if got, want := list(store.Filter{Algorithm: "afw"}), "["+id+"]"; got != want {
				t.Errorf("after a delete, algorithm afw: %s, want %s", got, want)
			}
			var trgm int
			if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM pg_indexes WHERE indexname IN ('runs_name_trgm', 'runs_note_trgm')`).Scan(&trgm); err != nil || trgm != 2 {
				t.Errorf("%d trigram indexes (%v), want 2: pg_trgm is part of PostgreSQL 15", trgm, err)
			}
		}
	},
	9: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// a run queued before data files travelled: none
		exec(t, pool, `INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us) VALUES
			('kkkkkkkkkkkk', 1767225600000000, 'queued', 'lasso', $1, 'v0.9', 1767225600000000)`, oldSpec)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			if refs, err := s.DataRefs(ctx, "kkkkkkkkkkkk"); err != nil || refs != nil {
				t.Fatalf("a v9 run's data files: %q, %v", refs, err)
			}
			if err := s.SetDataRefs(ctx, "kkkkkkkkkkkk", []byte(`[]`)); err != nil {
				t.Error(err)
			}
		}
	},
	8: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// a run running on a worker before runs could be paused there: no
		// steps, never paused, and it takes a pause
		exec(t, pool, `INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us, claim, beat_us) VALUES
			('jjjjjjjjjjjj', 1767225600000000, 'running', 'lasso', $1, 'v0.8', 1767225600000000, 'w1/3/1', 1767225600000000)`, oldSpec)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			c, err := s.Beat(ctx, "jjjjjjjjjjjj", "w1/3/1")
			if err != nil || c.Status != store.StatusRunning || c.Steps != 0 || c.PausedFor != 0 || c.PauseExpired() {
				t.Fatalf("a v8 run's control: %+v, %v", c, err)
			}
			if st, err := s.Control(ctx, "jjjjjjjjjjjj", OpPause, time.Hour); err != nil || st != store.StatusPaused {
				t.Errorf("pausing a v8 run: %q, %v", st, err)
			}
		}
	},
	7: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// runs put before imports had digests: none, and an import of the
		// same content is a new run, then found again by its digest
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, entered_us) VALUES
			('iiiiiiiiiiii', 1767225600000000, 1767225600000000, 'done', 'lasso', $1, 'v0.7', 1767225600000000)`, oldSpec)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			var digest *string
			if err := s.pool.QueryRow(ctx, `SELECT digest FROM runs WHERE id = 'iiiiiiiiiiii'`).Scan(&digest); err != nil || digest != nil {
				t.Fatalf("a v7 run's digest: %v, %v", digest, err)
			}
			ids := map[string]bool{}
			for i := 0; i < 2; i++ {
				im, err := s.StreamImport(ctx)
				if err != nil {
					t.Fatal(err)
				}
				r := storetest.TestRun("lasso")
				r.Status = store.StatusDone
				id, existing, err := im.Commit(ctx, r, "sha256:v7")
				if err != nil || existing != (i == 1) {
					t.Fatalf("import %d: %s %v %v", i, id, existing, err)
				}
				ids[id] = true
			}
			if _, total, err := s.List(ctx, store.Filter{}); err != nil || total != 2 || len(ids) != 1 || ids["iiiiiiiiiiii"] {
				t.Errorf("after two imports: %d runs, ids %v, %v", total, ids, err)
			}
		}
	},
	6: oldSweep(6, "ffffffffffff"),
	0: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		return func(t *testing.T, s *Store) {
			if _, total, err := s.List(context.Background(), store.Filter{}); err != nil || total != 0 {
				t.Errorf("a new database lists %d runs, %v", total, err)
			}
		}
	},
	1: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		recs := storetest.RandRecords(rand.New(rand.NewPCG(11, 12)), 30)
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels)
			VALUES ('aaaaaaaaaaaa', 1767225600000000, NULL, 'running', 'lasso', $1, 'v0.1', 'old run', 'kept', TRUE, 5, 10, 1, 0.5, '{"p":1}')`, oldSpec)
		exec(t, pool, `INSERT INTO traces (run_id, idx, algo, replication, seed, status, records, summary, panels, panels_error)
			VALUES ('aaaaaaaaaaaa', 0, 'afw', 0, 3, 'running', 30, NULL, NULL, '')`)
		exec(t, pool, `INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES ('aaaaaaaaaaaa', 0, 0, 10, $1)`, store.EncodeBatch(nil, recs[:10]))
		exec(t, pool, `INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES ('aaaaaaaaaaaa', 0, 10, 20, $1)`, store.EncodeBatch(nil, recs[10:]))
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			r, err := s.Get(ctx, "aaaaaaaaaaaa")
			if err != nil {
				t.Fatal(err)
			}
			// a shared store leaves live runs to the queue: still running
			if r.Status != store.StatusRunning || r.Name != "old run" || !r.Starred || r.Spec.Iters != 50 || r.Message != "" ||
				r.Instance.Samples != 10 || *r.Instance.FStar != 0.5 || string(r.Instance.Panels) != `{"p":1}` || r.Traces[0].Records != 30 {
				t.Errorf("old run read as %+v", r)
			}
			got, err := s.Records(ctx, "aaaaaaaaaaaa", 0, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			storetest.CheckRecords(t, got, recs)
			if _, err := s.PutSweep(ctx, &store.Sweep{Axes: []byte(`[]`)}); err != nil {
				t.Error(err)
			}
			if err := s.AppendRecords(ctx, "aaaaaaaaaaaa", 0, []solver.Record{{K: 99, Step: "fw"}}); err != nil {
				t.Error(err)
			}
			if err := s.SetMessage(ctx, "aaaaaaaaaaaa", "interrupted"); err != nil {
				t.Error(err)
			}
		}
	},
	5: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version) VALUES
			('gggggggggggg', 1767225600000000, 1767225600000000, 'done', 'lasso', $1, 'v0.5')`, oldSpec)
		exec(t, pool, `INSERT INTO verifications (id, run_id, at_us, outcome, records, detail, version)
			VALUES ('hhhhhhhhhhhh', 'gggggggggggg', 1767225700000000, 'reproduced', 51, '', 'v0.5')`)
		return func(t *testing.T, s *Store) {
			vs, err := s.Verifications(context.Background(), "gggggggggggg")
			if err != nil || len(vs) != 1 || vs[0].Records != 51 || vs[0].Outcome != "reproduced" {
				t.Fatalf("a v5 verification read as %+v, %v", vs, err)
			}
			// entered when it was created: long past, so Trim may take it
			if n, err := s.Trim(context.Background(), 0); err != nil || n != 1 {
				t.Errorf("trim: %d, %v", n, err)
			}
		}
	},
	4: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		// runs entered when they were created, or now for a date in the future
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version) VALUES
			('eeeeeeeeeeee', 1767225600000000, 1767225600000000, 'done', 'lasso', $1, 'v0.4'),
			('ffffffffffff', 253402214400000000, 253402214400000000, 'done', 'lasso', $1, 'v0.4')`, oldSpec)
		return func(t *testing.T, s *Store) {
			var past, future int64
			if err := s.pool.QueryRow(context.Background(), `SELECT
				(SELECT entered_us FROM runs WHERE id = 'eeeeeeeeeeee'), (SELECT entered_us FROM runs WHERE id = 'ffffffffffff')`).Scan(&past, &future); err != nil {
				t.Fatal(err)
			}
			if past != 1767225600000000 || future > time.Now().UnixMicro() || future < time.Now().Add(-time.Hour).UnixMicro() {
				t.Errorf("entered: %d and %d", past, future)
			}
			// the run from 9999 entered now: within the grace, Trim spares it
			if n, err := s.Trim(context.Background(), 0); err != nil || n != 1 {
				t.Errorf("trim: %d, %v", n, err)
			}
		}
	},
	3: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		exec(t, pool, `INSERT INTO runs (id, created_us, status, problem, spec, version, message)
			VALUES ('dddddddddddd', 1767225600000000, 'queued', 'lasso', $1, 'v0.3', '')`, oldSpec)
		exec(t, pool, `INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES ('dddddddddddd', 0, 'afw', 0, 3, 'queued')`)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			if claim, beat, err := s.Runner(ctx, "dddddddddddd"); err != nil || claim != "" || !beat.IsZero() {
				t.Fatalf("a v3 run's runner: %q %v %v", claim, beat, err)
			}
			if err := s.Claim(ctx, "dddddddddddd", "w1/1/1"); err != nil {
				t.Fatal(err)
			}
			if claim, beat, err := s.Runner(ctx, "dddddddddddd"); err != nil || claim != "w1/1/1" || beat.IsZero() {
				t.Errorf("after the claim: %q %v %v", claim, beat, err)
			}
		}
	},
	2: func(t *testing.T, pool *pgxpool.Pool) func(t *testing.T, s *Store) {
		exec(t, pool, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels)
			VALUES ('bbbbbbbbbbbb', 1767225600000000, 1767225601000000, 'cancelled', 'lasso', $1, 'v0.2', 'v2 run', '', FALSE, 5, 10, 1, NULL, NULL)`, oldSpec)
		exec(t, pool, `INSERT INTO sweeps (id, created_us, status, base, axes) VALUES ('cccccccccccc', 1767225600000000, 'done', $1, '[]')`, oldSpec)
		exec(t, pool, `INSERT INTO sweep_cells (sweep_id, idx, vals, run_id) VALUES ('cccccccccccc', 0, '{}', 'bbbbbbbbbbbb')`)
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			r, err := s.Get(ctx, "bbbbbbbbbbbb")
			if err != nil || r.Status != store.StatusCancelled || r.Name != "v2 run" || r.Message != "" || r.Ended.IsZero() {
				t.Fatalf("v2 run read as %+v, %v", r, err)
			}
			if err := s.SetMessage(ctx, r.ID, "cancelled: paused too long"); err != nil {
				t.Fatal(err)
			}
			if r, err := s.Get(ctx, r.ID); err != nil || r.Message != "cancelled: paused too long" {
				t.Errorf("message %q, %v", r.Message, err)
			}
			if sw, err := s.GetSweep(ctx, "cccccccccccc"); err != nil || sw.Cells[0].RunID != "bbbbbbbbbbbb" {
				t.Errorf("v2 sweep read as %+v, %v", sw, err)
			}
		}
	},
}

func exec(t *testing.T, pool *pgxpool.Pool, q string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func newPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// TestMigratesEveryEarlierVersion builds a database at every earlier schema
// version with that version's SQL, fills it, and opens it with the current
// code: the data is read, and what later versions added works beside it.
func TestMigratesEveryEarlierVersion(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	for v := 0; v < SchemaVersion; v++ {
		fill, ok := oldVersions[v]
		if !ok {
			t.Errorf("no test data for schema version %d: add an entry to oldVersions", v)
			continue
		}
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			url := c.NewDB(t)
			pool := newPool(t, url)
			if err := migrateTo(ctx, pool, v); err != nil {
				t.Fatal(err)
			}
			check := fill(t, pool)
			pool.Close()
			s, err := Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			check(t, s)
			var got int
			if err := s.pool.QueryRow(ctx, `SELECT version FROM fwlab_schema`).Scan(&got); err != nil || got != SchemaVersion {
				t.Errorf("schema version %d, %v; want %d", got, err, SchemaVersion)
			}
			if err := s.IntegrityCheck(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestOpenRefusesNewerSchema: a database of a newer fwlab is left alone.
func TestOpenRefusesNewerSchema(t *testing.T) {
	c := pgtest.Shared(t)
	url := c.NewDB(t)
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, s.pool, `UPDATE fwlab_schema SET version = 99`)
	s.Close()
	if _, err := Open(context.Background(), url); err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Fatalf("opening a newer schema: %v", err)
	}
}

// TestConcurrentOpensMigrateOnce: processes starting at once (a server and
// its workers) migrate one at a time, and all open.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	c := pgtest.Shared(t)
	url := c.NewDB(t)
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			s, err := Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	pool := newPool(t, url)
	defer pool.Close()
	var rows, v int
	if err := pool.QueryRow(context.Background(), `SELECT COUNT(*), MAX(version) FROM fwlab_schema`).Scan(&rows, &v); err != nil || rows != 1 || v != SchemaVersion {
		t.Errorf("fwlab_schema: %d rows, version %d, %v", rows, v, err)
	}
}

// TestIntegrityCheckFindsDamage: a batch gone or a count too high is named
// by IntegrityCheck, and a read reports the missing records.
func TestIntegrityCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	id, err := s.PutRun(ctx, storetest.TestRun("lasso", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b := 0; b < 5; b++ {
		if err := s.AppendRecords(ctx, id, 0, storetest.RandRecords(rng, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	exec(t, s.pool, `DELETE FROM batches WHERE first_rec = 20`)
	err = s.IntegrityCheck(ctx)
	if err == nil || !strings.Contains(err.Error(), "batch at 30 follows records to 20") || !strings.Contains(err.Error(), "counts 50 records, its batches hold 40") {
		t.Errorf("a batch gone: %v", err)
	}
	if _, err := s.Records(ctx, id, 0, 0, -1); err == nil || !strings.Contains(err.Error(), "records 20 to 30 are missing") {
		t.Errorf("reading across the gap: %v", err)
	}
	if got, err := s.Records(ctx, id, 0, 30, 45); err != nil || len(got) != 15 {
		t.Errorf("the records after the gap: %d, %v", len(got), err)
	}
}

// Open migrates with a long idle-in-transaction timeout (a process starved
// of CPU between two statements keeps its connection) and gives the pool's
// connections back with the store's own.
func TestMigrationLeavesTheIdleTimeout(t *testing.T) {
	ctx := context.Background()
	s := openShared(t) // a fresh database: every migration ran
	want := IdleInTransaction.String()
	conns := make([]*pgxpool.Conn, 0, 4)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range cap(conns) { // the migration's connection among them
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var got string
		if err := c.QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("a connection of the store after Open: idle_in_transaction_session_timeout %s, want %s", got, want)
		}
	}
}
