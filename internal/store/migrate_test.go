package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// oldVersions fills a database at an earlier schema version, written with
// that version's SQL, and returns a check of what the current code must
// read from it. A new schema version adds an entry for the version before
// it (the test fails until it does).
// oldSweep fills a database at version v (before sweeps had a name, a
// note and a star) with a sweep, and checks that it reads and takes an edit.
func oldSweep(v int, id string) func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
	return func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		if _, err := db.Exec(`INSERT INTO sweeps (id, created_us, status, base, axes) VALUES (?, 1767225600000000, 'done', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}', '[]')`, id); err != nil {
			t.Fatal(err)
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			sw, err := s.GetSweep(ctx, id)
			if err != nil || sw.Name != "" || sw.Starred {
				t.Fatalf("v%d sweep read as %+v, %v", v, sw, err)
			}
			name, yes := "ρ study", true
			if err := s.UpdateSweep(ctx, sw.ID, Edit{Name: &name, Starred: &yes}); err != nil {
				t.Fatal(err)
			}
			if sw, err := s.GetSweep(ctx, sw.ID); err != nil || sw.Name != name || !sw.Starred {
				t.Errorf("v%d sweep after an edit: %+v, %v", v, sw, err)
			}
		}
	}
}

var oldVersions = map[int]func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store){
	10: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		// listed runs of two problems, three statuses and three
		// algorithms (one a variant), and a run still being imported
		const sp = `'{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}'`
		for i, q := range []string{"lasso done afw", "lasso done fw", "lasso failed afw+", "gflasso done afw", "gflasso cancelled fw", "lasso importing afw"} {
			f := strings.Fields(q)
			entered := "1767225600000000"
			if f[1] == "importing" {
				f[1], entered = "done", "NULL"
			}
			id := fmt.Sprintf("nnnnnnnnnnn%c", 'a'+i)
			algo := strings.Replace(f[2], "+", " + slack collapse", 1)
			for _, q := range []string{
				fmt.Sprintf(`INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us) VALUES ('%s', %d, '%s', '%s', %s, 'v0.8', %s)`,
					id, 1767225600000000+i, f[1], f[0], sp, entered),
				fmt.Sprintf(`INSERT INTO traces (run_id, idx, algo, replication, seed, status, records) VALUES ('%s', 0, '%s', 0, 1, '%s', 0)`, id, algo, f[1]),
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			// every total from run_algo_counts equals the runs the
			// filter lists
			check := func(when string) {
				t.Helper()
				for _, algo := range []string{"afw", "fw", "afw + slack collapse", "pfw"} {
					for _, f := range []Filter{{}, {Problem: "lasso"}, {Problem: "gflasso"}, {Status: StatusDone}, {Status: StatusFailed},
						{Problem: "lasso", Status: StatusDone}, {Problem: "gflasso", Status: StatusCancelled}, {Problem: "nothing"}} {
						f.Algorithm, f.Limit = algo, MaxLimit
						runs, total, err := s.List(ctx, f)
						if err != nil {
							t.Fatal(err)
						}
						if total != len(runs) {
							t.Errorf("%s, %+v: total %d, %d runs listed", when, f, total, len(runs))
						}
					}
				}
			}
			check("after the migration")
			if _, err := s.PutRun(ctx, testRun("gflasso", "afw", "pfw")); err != nil {
				t.Fatal(err)
			}
			if err := s.SetStatus(ctx, "nnnnnnnnnnna", StatusFailed, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(ctx, "nnnnnnnnnnnd"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, `UPDATE traces SET algo = 'pfw' WHERE run_id = 'nnnnnnnnnnnb'`); err != nil {
				t.Fatal(err)
			}
			check("after a new run, a status change, a delete and a trace's algorithm changed")
			// an import streams in (Open dropped the v8 one), then ends
			// failed: the run is listed and counted
			for _, q := range []string{
				`INSERT INTO runs (id, created_us, status, problem, spec, version) VALUES ('nnnnnnnnnnnz', 1767225600000009, 'done', 'lasso', ` + sp + `, 'v0.8')`,
				`INSERT INTO traces (run_id, idx, algo, replication, seed, status, records) VALUES ('nnnnnnnnnnnz', 0, 'afw', 0, 1, 'done', 0)`,
			} {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			check("while an import streams in")
			if _, err := s.db.ExecContext(ctx, `UPDATE runs SET entered_us = 1767225600000000, status = 'failed' WHERE id = 'nnnnnnnnnnnz'`); err != nil {
				t.Fatal(err)
			}
			check("after an import's end")
			if _, total, _ := s.List(ctx, Filter{Algorithm: "afw", Status: StatusFailed}); total != 3 {
				t.Errorf("afw failed: %d runs, want 3 (a, c's variant, z)", total)
			}
		}
	},
	9: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		// a run made before runs could be opened from outside
		const sp = `'{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}'`
		if _, err := db.Exec(`INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us) VALUES ('oooooooooooo', 1767225600000000, 'done', 'lasso', ` + sp + `, 'v0.9', 1767225600000000)`); err != nil {
			t.Fatal(err)
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			r, err := s.Get(ctx, "oooooooooooo")
			if err != nil || r.Outside || r.Spec.Outside {
				t.Fatalf("the v9 run: %v %+v", err, r)
			}
			// a run opened from outside is marked, its token's hash kept
			// and never read back
			sp := testRun("my problem", "pgd")
			sp.Spec.Outside = true
			sp.TokenHash = []byte("0123456789abcdef0123456789abcdef")
			id, err := s.PutRun(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, id)
			if err != nil || !got.Outside || got.TokenHash != nil {
				t.Fatalf("the outside run: %v %+v", err, got)
			}
			var hash []byte
			if err := s.db.QueryRowContext(ctx, `SELECT token_hash FROM runs WHERE id = ?`, id).Scan(&hash); err != nil || string(hash) != string(sp.TokenHash) {
				t.Errorf("the stored token hash: %v %q", err, hash)
			}
			runs, _, err := s.List(ctx, Filter{})
			if err != nil || len(runs) != 2 || runs[0].Outside == runs[1].Outside {
				t.Errorf("listed: %v %+v", err, runs)
			}
		}
	},
	8: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		// a run whose message names an upload, before uploads had names
		sum := strings.Repeat("ab", 32)
		if _, err := db.Exec(`INSERT INTO runs (id, created_us, status, problem, spec, version, message, entered_us) VALUES
			('nnnnnnnnnnnn', 1767225600000000, 'failed', 'lasso', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}', 'v0.8',
			'params.y: names the upload ` + sum[:12] + `…, which is not here', 1767225600000000)`); err != nil {
			t.Fatal(err)
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			if got, err := s.UploadNames(ctx, []string{sum[:12]}); err != nil || len(got) != 0 {
				t.Errorf("a v8 store's upload names: %v, %v; want none", got, err)
			}
			if err := s.SetUploadName(ctx, sum, "y.csv"); err != nil {
				t.Fatal(err)
			}
			if got, err := s.UploadNames(ctx, []string{sum[:12]}); err != nil || got[sum] != "y.csv" {
				t.Errorf("a v8 store's upload names after naming one: %v, %v", got, err)
			}
			if r, err := s.Get(ctx, "nnnnnnnnnnnn"); err != nil || !strings.Contains(r.Message, sum[:12]) {
				t.Errorf("the v8 run: %+v, %v", r, err)
			}
		}
	},
	7: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		// listed runs of two problems and three statuses, and a run still
		// being imported (not listed, not counted)
		const sp = `'{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}'`
		for i, q := range []string{"lasso done", "lasso done", "lasso failed", "gflasso done", "gflasso cancelled", "lasso importing"} {
			f := strings.Fields(q)
			entered := "1767225600000000"
			if f[1] == "importing" {
				f[1], entered = "done", "NULL"
			}
			if _, err := db.Exec(fmt.Sprintf(`INSERT INTO runs (id, created_us, status, problem, spec, version, entered_us) VALUES ('mmmmmmmmmmm%c', %d, '%s', '%s', %s, 'v0.7', %s)`,
				'a'+i, 1767225600000000+i, f[1], f[0], sp, entered)); err != nil {
				t.Fatal(err)
			}
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			// every total from run_counts equals a count of the listed runs
			check := func(when string) {
				t.Helper()
				for _, f := range []Filter{{}, {Problem: "lasso"}, {Problem: "gflasso"}, {Status: StatusDone}, {Status: StatusFailed},
					{Problem: "lasso", Status: StatusDone}, {Problem: "gflasso", Status: StatusCancelled}, {Problem: "nothing"}} {
					_, total, err := s.List(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					var want int
					if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE entered_us IS NOT NULL AND (? = '' OR problem = ?) AND (? = '' OR status = ?)`,
						f.Problem, f.Problem, f.Status, f.Status).Scan(&want); err != nil {
						t.Fatal(err)
					}
					if total != want {
						t.Errorf("%s, %+v: total %d, want %d", when, f, total, want)
					}
				}
			}
			check("after the migration")
			if _, err := s.PutRun(ctx, testRun("gflasso", "afw")); err != nil {
				t.Fatal(err)
			}
			if err := s.SetStatus(ctx, "mmmmmmmmmmma", StatusFailed, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(ctx, "mmmmmmmmmmmd"); err != nil {
				t.Fatal(err)
			}
			// an import streams in (not listed, not counted), then ends:
			// the run is listed and counted (Open dropped the v7 one)
			if _, err := s.db.ExecContext(ctx, `INSERT INTO runs (id, created_us, status, problem, spec, version) VALUES ('mmmmmmmmmmmz', 1767225600000009, 'done', 'lasso', `+sp+`, 'v0.7')`); err != nil {
				t.Fatal(err)
			}
			check("while an import streams in")
			if _, err := s.db.ExecContext(ctx, `UPDATE runs SET entered_us = 1767225600000000 WHERE id = 'mmmmmmmmmmmz'`); err != nil {
				t.Fatal(err)
			}
			check("after a new run, a status change, a delete and an import's end")
		}
	},
	6: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		// runs filed before History's indexes: a named run of a variant,
		// a noted run of another algorithm, a run still being imported
		const sp = `'{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}'`
		for _, q := range []string{
			`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, entered_us) VALUES ('hhhhhhhhhhhh', 1767225600000000, 1767225601000000, 'done', 'lasso', ` + sp + `, 'v0.6', 'Curvature Baseline', 1767225600000000)`,
			`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, note, entered_us) VALUES ('iiiiiiiiiiii', 1767225700000000, 1767225701000000, 'failed', 'gflasso', ` + sp + `, 'v0.6', 'diverged at k = 40', 1767225700000000)`,
			`INSERT INTO runs (id, created_us, status, problem, spec, version, name) VALUES ('jjjjjjjjjjjj', 1767225800000000, 'done', 'lasso', ` + sp + `, 'v0.6', 'curvature import')`,
			`INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES ('hhhhhhhhhhhh', 0, 'afw + slack collapse', 0, 3, 'done')`,
			`INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES ('iiiiiiiiiiii', 0, 'pfw', 0, 3, 'failed')`,
			`INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES ('jjjjjjjjjjjj', 0, 'afw', 0, 3, 'done')`,
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			list := func(f Filter) []string {
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
				return ids
			}
			for _, c := range []struct {
				f    Filter
				want string
			}{
				{Filter{Algorithm: "afw"}, "[hhhhhhhhhhhh]"},
				{Filter{Algorithm: "afw + slack collapse"}, "[hhhhhhhhhhhh]"},
				{Filter{Algorithm: "pfw", Status: StatusFailed}, "[iiiiiiiiiiii]"},
				{Filter{Text: "CURVATURE"}, "[hhhhhhhhhhhh]"},
				{Filter{Text: "k = 4"}, "[iiiiiiiiiiii]"},
				{Filter{Problem: "lasso"}, "[hhhhhhhhhhhh]"},
				{Filter{}, "[iiiiiiiiiiii hhhhhhhhhhhh]"},
			} {
				if got := fmt.Sprint(list(c.f)); got != c.want {
					t.Errorf("v6 store, %+v: %s, want %s", c.f, got, c.want)
				}
			}
			// the indexes follow the runs: a rename, a new run, a delete
			name := "renamed"
			if err := s.Update(ctx, "hhhhhhhhhhhh", Edit{Name: &name}); err != nil {
				t.Fatal(err)
			}
			id, err := s.PutRun(ctx, testRun("lasso", "afw + slack collapse"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(list(Filter{Text: "curvature"})), "[]"; got != want {
				t.Errorf("after the rename, search: %s, want %s", got, want)
			}
			if got, want := fmt.Sprint(list(Filter{Text: "renamed"})), "[hhhhhhhhhhhh]"; got != want {
				t.Errorf("after the rename, search: %s, want %s", got, want)
			}
			if got, want := fmt.Sprint(list(Filter{Algorithm: "afw"})), "["+id+" hhhhhhhhhhhh]"; got != want {
				t.Errorf("with a new run, algorithm afw: %s, want %s", got, want)
			}
			if _, err := s.Delete(ctx, "hhhhhhhhhhhh"); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(list(Filter{Algorithm: "afw"})), "["+id+"]"; got != want {
				t.Errorf("after a delete, algorithm afw: %s, want %s", got, want)
			}
			if got, want := fmt.Sprint(list(Filter{Text: "renamed"})), "[]"; got != want {
				t.Errorf("after a delete, search: %s, want %s", got, want)
			}
		}
	},
	4: oldSweep(4, "ffffffffffff"),
	5: oldSweep(5, "gggggggggggg"),
	3: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		// a run made here and a bundle imported from 9999: version 4 dates
		// their entry into the store by their creation, but never later
		// than the migration
		for _, q := range []string{
			`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, message) VALUES ('dddddddddddd', 1767225600000000, 1767225601000000, 'done', 'lasso', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}', 'v0.3', 'm')`,
			`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version) VALUES ('eeeeeeeeeeee', 253402214400000000, 253402214400000000, 'done', 'lasso', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}', 'v0.3')`,
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			var a, b int64
			if err := s.db.QueryRowContext(ctx, `SELECT entered_us FROM runs WHERE id = 'dddddddddddd'`).Scan(&a); err != nil || a != 1767225600000000 {
				t.Errorf("entered %d, %v; want its creation", a, err)
			}
			if err := s.db.QueryRowContext(ctx, `SELECT entered_us FROM runs WHERE id = 'eeeeeeeeeeee'`).Scan(&b); err != nil || b > time.Now().UnixMicro() {
				t.Errorf("the future-dated run entered at %d, %v; want at most now", b, err)
			}
			if r, err := s.Get(ctx, "dddddddddddd"); err != nil || r.Message != "m" {
				t.Errorf("v3 run read as %+v, %v", r, err)
			}
		}
	},
	2: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		for _, q := range []string{
			`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels)
				VALUES ('bbbbbbbbbbbb', 1767225600000000, 1767225601000000, 'cancelled', 'lasso', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}',
				'v0.2', 'v2 run', '', 0, 5, 10, 1, NULL, NULL)`,
			`INSERT INTO sweeps (id, created_us, status, base, axes) VALUES ('cccccccccccc', 1767225600000000, 'done', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}', '[]')`,
			`INSERT INTO sweep_cells (sweep_id, idx, vals, run_id) VALUES ('cccccccccccc', 0, '{}', 'bbbbbbbbbbbb')`,
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			r, err := s.Get(ctx, "bbbbbbbbbbbb")
			if err != nil || r.Status != StatusCancelled || r.Name != "v2 run" || r.Message != "" {
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
	1: func(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
		recs := randRecords(rand.New(rand.NewPCG(11, 12)), 30)
		stmts := []struct {
			q    string
			args []any
		}{
			{`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels)
				VALUES ('aaaaaaaaaaaa', 1767225600000000, NULL, 'running', 'lasso', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}',
				'v0.1', 'old run', 'kept', 1, 5, 10, 1, 0.5, '{"p":1}')`, nil},
			{`INSERT INTO traces (run_id, idx, algo, replication, seed, status, records, summary, panels, panels_error)
				VALUES ('aaaaaaaaaaaa', 0, 'afw', 0, 3, 'running', 30, NULL, NULL, '')`, nil},
			{`INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES ('aaaaaaaaaaaa', 0, 0, 10, ?)`, []any{encodeBatch(nil, recs[:10])}},
			{`INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES ('aaaaaaaaaaaa', 0, 10, 20, ?)`, []any{encodeBatch(nil, recs[10:])}},
		}
		for _, st := range stmts {
			if _, err := db.Exec(st.q, st.args...); err != nil {
				t.Fatal(err)
			}
		}
		return func(t *testing.T, s *Store) {
			ctx := context.Background()
			r, err := s.Get(ctx, "aaaaaaaaaaaa")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != StatusInterrupted || r.Name != "old run" || !r.Starred || r.Spec.Iters != 50 ||
				r.Instance.Samples != 10 || *r.Instance.FStar != 0.5 || r.Traces[0].Status != StatusInterrupted || r.Traces[0].Records != 30 {
				t.Errorf("old run read as %+v", r)
			}
			got, err := s.Records(ctx, "aaaaaaaaaaaa", 0, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, got, recs)
			// and the new parts work beside it
			if _, err := s.PutSweep(ctx, &Sweep{Axes: []byte(`[]`)}); err != nil {
				t.Error(err)
			}
			if err := s.AppendRecords(ctx, "aaaaaaaaaaaa", 0, []solver.Record{{K: 99, Step: "fw"}}); err != nil {
				t.Error(err)
			}
		}
	},
}

func TestOpensEveryEarlierVersion(t *testing.T) {
	for v := 1; v < SchemaVersion; v++ {
		fill, ok := oldVersions[v]
		if !ok {
			t.Errorf("no test database for schema version %d: add it to oldVersions", v)
			continue
		}
		t.Run("v"+string(rune('0'+v)), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_foreign_keys=1")
			if err != nil {
				t.Fatal(err)
			}
			if err := migrateTo(context.Background(), db, v); err != nil {
				t.Fatal(err)
			}
			if got, _ := schemaVersion(context.Background(), db); got != v {
				t.Fatalf("built version %d, want %d", got, v)
			}
			check := fill(t, db)
			db.Close()

			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, _ := schemaVersion(context.Background(), s.db); got != SchemaVersion {
				t.Fatalf("opened at version %d, want %d", got, SchemaVersion)
			}
			check(t, s)
			if err := s.IntegrityCheck(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
}
