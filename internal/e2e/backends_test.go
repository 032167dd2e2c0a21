package e2e

// The page tests that must hold on every store run as a table over two
// backends (onBothStores):
//
//   - sqlite: the real server in this process over a run store in a
//     temporary SQLite file (storeServer);
//   - cluster: `dashboard serve -slots 0` over a fresh database of a
//     throwaway PostgreSQL cluster, running nothing itself, and two
//     `dashboard worker` processes (w1, w2) on the same database that run
//     what its pages start.
//
// One PostgreSQL cluster and one dashboard binary serve every cluster case
// of a run of the test binary (pgtest.Shared, dashboardBinary; TestMain
// removes both); each case takes a database, a server and workers of its
// own, so that no case sees another's runs or counts toward its limits.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
)

// backend is a running dashboard over one of the stores.
type backend struct {
	name string // "sqlite" or "cluster"
	url  string // the dashboard's address, http://host:port
	// procs are the cluster's processes: the server, then the workers
	// (none in-process).
	procs   []*proc
	workers []string // the workers' names
}

// onCluster says whether the runs run on dashboard worker processes.
func (b *backend) onCluster() bool { return len(b.workers) > 0 }

// logs is what the cluster's processes printed after their first line,
// for failure messages ("" when they printed nothing more).
func (b *backend) logs() string {
	var s strings.Builder
	said := false
	for i, p := range b.procs {
		what := "server"
		if i > 0 {
			what = "worker " + b.workers[i-1]
		}
		out := p.output()
		said = said || strings.TrimSpace(out) != ""
		fmt.Fprintf(&s, "\n--- %s:\n%s", what, out)
	}
	if !said {
		return ""
	}
	return s.String()
}

// checkRanHere checks that run id ran where the backend says: on the
// cluster, on one of its workers (so on PostgreSQL, taken from its queue);
// in-process, on none.
func (b *backend) checkRanHere(t *testing.T, id string) {
	t.Helper()
	var st struct{ Worker string }
	if err := json.Unmarshal(httpGet(t, b.url+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	if !b.onCluster() {
		if st.Worker != "" {
			t.Errorf("run %s of the in-process server ran on worker %q", id, st.Worker)
		}
		return
	}
	for _, w := range b.workers {
		if st.Worker == w {
			return
		}
	}
	t.Errorf("run %s ran on %q, want one of the cluster's workers %v%s", id, st.Worker, b.workers, b.logs())
}

// onBothStores runs f as the subtests sqlite and cluster, each on a
// backend and in a browser context of its own made for it. The two run at
// the same time (t.Parallel): they share nothing, and the cluster's case
// mostly waits for its processes to start and for its workers.
func onBothStores(t *testing.T, f func(t *testing.T, b *backend)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, sqliteBackend(t))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		f(t, clusterBackend(t))
	})
}

// sqliteBackend is the real server in-process over a SQLite file.
func sqliteBackend(t *testing.T) *backend {
	t.Helper()
	base, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	return &backend{name: "sqlite", url: base}
}

// clusterBackend is `dashboard serve -slots 0` and two `dashboard worker`
// processes of two slots each, over a new database of the shared cluster.
func clusterBackend(t *testing.T) *backend {
	t.Helper()
	browserPath(t) // no browser: skip (or fail under CI) before starting anything
	t0 := time.Now()
	db := pgtest.Shared(t).NewDB(t)
	bin := dashboardBinary(t)
	b := &backend{name: "cluster"}
	srv := startProc(t, bin, "serve", "-db", db, "-slots", "0", "-addr", "127.0.0.1:0", "-data", "")
	b.url, b.procs = srv.url, []*proc{srv}
	for _, name := range []string{"w1", "w2"} {
		w := startProc(t, bin, "worker", "-db", db, "-name", name, "-slots", "2", "-metrics-addr", "127.0.0.1:0", "-data", "", "-cache", t.TempDir())
		b.procs = append(b.procs, w)
		b.workers = append(b.workers, name)
	}
	// Each worker answers its health check: it is connected to the
	// database and takes jobs.
	for i, w := range b.procs[1:] {
		deadline := time.Now().Add(60 * time.Second)
		for {
			res, err := healthClient.Get(strings.TrimSuffix(w.url, "/metrics") + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					break
				}
				err = fmt.Errorf("GET /healthz: %s", res.Status)
			}
			if time.Now().After(deadline) {
				t.Fatalf("worker %s is not healthy: %v%s", b.workers[i], err, b.logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("the cluster's server and workers answered %.1f s after the start", time.Since(t0).Seconds())
	t.Cleanup(func() {
		if l := b.logs(); t.Failed() && l != "" {
			t.Logf("the cluster's output:%s", l)
		}
	})
	return b
}

// healthClient asks the workers' health checks, each in bounded time.
var healthClient = &http.Client{Timeout: 5 * time.Second}

// built is the dashboard binary the tests of this run share.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// dashboardBinary builds the dashboard command of this module once per
// run of the test binary and returns its path (TestMain removes it).
func dashboardBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "fwlab-e2e-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		bin := filepath.Join(dir, "dashboard")
		if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/dashboard").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// removeBuilt removes the shared binary, if one was built.
func removeBuilt() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}
