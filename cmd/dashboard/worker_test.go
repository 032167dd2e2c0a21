package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// envWorkerArgs makes the test binary a `dashboard worker` (its arguments
// separated by newlines) with the synthetic test problem registered, for
// the tests that kill or stop worker processes.
const envWorkerArgs = "FWLAB_TEST_WORKER_ARGS"

func init() {
	if args := os.Getenv(envWorkerArgs); args != "" {
		sessiontest.Register()
		os.Exit(runWorker(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
}

type workerProc struct {
	name    string
	cmd     *exec.Cmd
	metrics string // the /metrics URL
	mu      sync.Mutex
	out     bytes.Buffer // stdout after the first line
	stderr  bytes.Buffer
	done    chan struct{}
}

func (w *workerProc) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String() + w.stderr.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func startWorkerProc(t testing.TB, db, name string, args ...string) *workerProc {
	t.Helper()
	w := &workerProc{name: name, done: make(chan struct{})}
	all := append([]string{"-db", db, "-name", name, "-metrics-addr", "127.0.0.1:0"}, args...)
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), envWorkerArgs+"="+strings.Join(all, "\n"))
	w.cmd.Stderr = lockedWriter{&w.mu, &w.stderr}
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		<-w.done
	})
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		w.cmd.Wait()
		t.Fatalf("worker %s printed nothing: %s", name, w.stderr.String())
	}
	line := sc.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("worker %s printed %q", name, line)
	}
	w.metrics = strings.Fields(line[i:])[0]
	go func() {
		io.Copy(lockedWriter{&w.mu, &w.out}, stdout)
		w.cmd.Wait()
		close(w.done)
	}()
	return w
}

func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		var v float64
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			fmt.Sscan(f[1], &v)
			return v
		}
	}
	t.Fatalf("no %s in %s", name, b)
	return 0
}

// TestWorkerProcessesRunASweep: three `dashboard worker` processes run a
// 24-cell sweep queued by `dashboard submit`; one is killed (kill -9)
// while it runs cells and another stopped with SIGTERM; the cells of both
// are completed by the workers left, every record stored exactly once.
func TestWorkerProcessesRunASweep(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	const n = 400 // records per trace; 2 ms each: about a second a cell
	doc := fmt.Sprintf(`{"base":{"problem":%q,"params":{"n":"%d","delay_us":"2000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d},
		"axes":[{"param":"seed","values":[1,2,3,4,5,6,7,8,9,10,11,12]},{"param":"params.delay_us","values":["2000","1999"]}]}`, sessiontest.Name, n, n)
	docPath := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startChild(t, "-db", db, "-slots", "0") // the dashboard beside the workers, running nothing
	ws := []*workerProc{}
	for i := 0; i < 3; i++ {
		ws = append(ws, startWorkerProc(t, db, fmt.Sprintf("w%d", i), "-slots", "2", "-rescue-after", "4s", "-drain", "300ms"))
	}
	var out, errb bytes.Buffer
	if code := runSubmit([]string{"-db", db, "-sweep", docPath}, nil, &out, &errb); code != 0 {
		t.Fatalf("submit: %d %s", code, errb.String())
	}
	var sid string
	fmt.Sscanf(out.String(), "sweep %s queued", &sid)

	// kill -9 w0 once it has a run under way, then SIGTERM w1 likewise
	busy := func(w *workerProc) bool {
		runs, _, err := st.List(ctx, store.Filter{Status: store.StatusRunning})
		if err != nil {
			return false
		}
		for _, r := range runs {
			if claim, _, _ := st.Runner(ctx, r.ID); strings.HasPrefix(claim, w.name+"/") && r.Traces[0].Records > 0 {
				return true
			}
		}
		return false
	}
	waitUntil(t, time.Minute, "w0 to run a cell", func() bool { return busy(ws[0]) })
	if err := ws[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "w1 to run a cell", func() bool { return busy(ws[1]) })
	if got := metricValue(t, ws[1].metrics, "fwlab_worker_jobs_running"); got < 1 {
		t.Errorf("w1's metrics say %v jobs running", got)
	}
	start := time.Now()
	if err := ws[1].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ws[1].done:
	case <-time.After(20 * time.Second):
		t.Fatalf("w1 still runs 20 s after SIGTERM: %s", ws[1].output())
	}
	if code := ws[1].cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("w1 exited %d after SIGTERM: %s", code, ws[1].output())
	}
	t.Logf("w1 stopped %v after SIGTERM: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(ws[1].output()))

	deadline := time.Now().Add(4 * time.Minute)
	for {
		sw, err := st.GetSweep(ctx, sid)
		if err == nil && !store.Live(sw.Status) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep has not ended on w2: %s\n%s", jobStates(ctx, st), ws[2].output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	sw, _ := st.GetSweep(ctx, sid)
	if sw.Status != store.StatusDone || len(sw.Cells) != 24 {
		t.Fatalf("sweep %s, %d cells", sw.Status, len(sw.Cells))
	}
	byWorker := map[string]int{}
	for _, cell := range sw.Cells {
		r, err := st.Get(ctx, cell.RunID)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := st.Records(ctx, r.ID, 0, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusDone || len(recs) != n+1 || r.Traces[0].Records != n+1 {
			t.Errorf("cell %d: %s with %d records", cell.Index, r.Status, len(recs))
		}
		for k, rec := range recs {
			if rec.K != k {
				t.Fatalf("cell %d: record %d has k %d (a duplicate or a gap)", cell.Index, k, rec.K)
			}
		}
		claim, _, _ := st.Runner(ctx, r.ID)
		name, _, _ := strings.Cut(claim, "/")
		byWorker[name]++
	}
	t.Logf("cells finished by worker: %v", byWorker)
	if byWorker["w2"] == 0 {
		t.Errorf("w2 finished no cell: %v", byWorker)
	}
	if got := metricValue(t, ws[2].metrics, "fwlab_worker_records_total"); got < float64(byWorker["w2"]*(n+1)) {
		t.Errorf("w2's metrics count %v records stored, it finished %d cells of %d", got, byWorker["w2"], n+1)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
	// the server shows the sweep the workers ran, every cell done
	var view struct {
		Status string
		Cells  []struct{ Run, Status string }
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/sweeps/"+sid), &view); err != nil {
		t.Fatal(err)
	}
	if view.Status != "done" || len(view.Cells) != 24 {
		t.Errorf("the server's sweep: %s with %d cells", view.Status, len(view.Cells))
	}
	for i, cell := range view.Cells {
		if cell.Status != "done" || cell.Run != sw.Cells[i].RunID {
			t.Errorf("the server's cell %d: %+v", i, cell)
		}
	}
	resp, err := http.Get(strings.TrimSuffix(ws[2].metrics, "/metrics") + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v %v", resp, err)
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWorkerFlagErrors: bad flags are refused with the flag named.
func TestWorkerFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "-db: must be a PostgreSQL URL"},
		{[]string{"-db", "/tmp/x.db"}, "-db: must be a PostgreSQL URL"},
		{[]string{"-db", "postgres://x@/y", "-slots", "0"}, "-slots: must be at least 1"},
		{[]string{"-db", "postgres://x@/y", "-rescue-after", "0s"}, "-rescue-after: must be at least two heartbeats (4s), got 0s"},
		{[]string{"-db", "postgres://x@/y", "-rescue-after", "3s"}, "-rescue-after: must be at least two heartbeats (4s), got 3s"},
		{[]string{"-db", "postgres://x@/y", "-name", ""}, "-name: must not be empty"},
		{[]string{"-db", "postgres://x@/y", "extra"}, "unexpected argument"},
	} {
		var out, errb bytes.Buffer
		if code := worker(context.Background(), c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := runSubmit([]string{"-db", "sqlite.db", "x.json"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-db: must be a PostgreSQL URL") {
		t.Errorf("submit to a file: %d %q", code, errb.String())
	}
}

// jobStates describes River's jobs, for a failure's message.
func jobStates(ctx context.Context, st *pgstore.Store) string {
	rows, err := st.Pool().Query(ctx, `SELECT id, state, attempt, COALESCE(array_to_string(attempted_by, ','), ''), args->>'run_id', scheduled_at FROM river_job ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id int64
		var state, by, run string
		var attempt int
		var at time.Time
		if err := rows.Scan(&id, &state, &attempt, &by, &run, &at); err != nil {
			return err.Error()
		}
		r, _ := st.Get(ctx, run)
		status := ""
		if r != nil {
			status = r.Status
		}
		fmt.Fprintf(&b, "job %d %s attempt %d by %s run %s (%s) at %s\n", id, state, attempt, by, run, status, at.Format("15:04:05"))
	}
	return b.String()
}

// TestCancelReachesAWorkerProcess: `dashboard cancel` of a run running on
// a worker process stops it within a heartbeat or two, its records kept;
// cancelling a sweep cancels its live cells, so queued ones never start.
func TestCancelReachesAWorkerProcess(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	startWorkerProc(t, db, "w0", "-slots", "1")
	var out, errb bytes.Buffer
	slow := `{"problem":"test-fake","params":{"n":"1000000","delay_us":"500"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":1000000}`
	if code := runSubmit([]string{"-db", db, "-"}, strings.NewReader(slow), &out, &errb); code != 0 {
		t.Fatalf("submit: %s", errb.String())
	}
	var id string
	fmt.Sscanf(out.String(), "run %s queued", &id)
	waitUntil(t, time.Minute, "records", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Records > 0
	})
	sweepDoc := filepath.Join(t.TempDir(), "sweep.json")
	os.WriteFile(sweepDoc, []byte(`{"base":`+slow+`,"axes":[{"param":"seed","values":[1,2,3]}]}`), 0o644)
	out.Reset()
	if code := runSubmit([]string{"-db", db, "-sweep", sweepDoc}, nil, &out, &errb); code != 0 {
		t.Fatalf("submit: %s", errb.String())
	}
	var sid string
	fmt.Sscanf(out.String(), "sweep %s queued", &sid)
	out.Reset()
	if code := runCancel([]string{"-db", db, id, sid}, &out, &errb); code != 0 {
		t.Fatalf("cancel: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), id+": run cancelled") || !strings.Contains(out.String(), sid+": sweep cancelled (3 live cells)") {
		t.Errorf("cancel printed %q", out.String())
	}
	waitUntil(t, 30*time.Second, "the worker to stop the run", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Summary != nil
	})
	r, _ := st.Get(ctx, id)
	if r.Status != store.StatusCancelled || r.Traces[0].Records == 0 {
		t.Errorf("the cancelled run: %s with %d records", r.Status, r.Traces[0].Records)
	}
	time.Sleep(time.Second) // the worker is free: the sweep's cells must not start
	sw, _ := st.GetSweep(ctx, sid)
	for _, cell := range sw.Cells {
		if r, _ := st.Get(ctx, cell.RunID); r.Status != store.StatusCancelled || r.Traces[0].Records != 0 {
			t.Errorf("cell %d: %s with %d records", cell.Index, r.Status, r.Traces[0].Records)
		}
	}
	if sw.Status != store.StatusCancelled {
		t.Errorf("the sweep: %s", sw.Status)
	}
	out.Reset()
	errb.Reset()
	if code := runCancel([]string{"-db", db, id, "nosuchrun222"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "the run has ended (cancelled)") || !strings.Contains(errb.String(), "nosuchrun222: no run or sweep has this id") {
		t.Errorf("cancelling again: %d %q", code, errb.String())
	}
}

// TestRescueGoesByHeartbeat: a run lasting longer than -rescue-after on a
// live worker process is not rescued (one claim, on its worker, all
// along); once that worker is killed (kill -9), the run is taken over by
// another about -rescue-after after the killed worker's last heartbeat
// and run again from the start, done, its records whole and stored once.
func TestRescueGoesByHeartbeat(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	const after = 4 * time.Second
	w0 := startWorkerProc(t, db, "w0", "-slots", "1", "-rescue-after", after.String())
	const n = 9000 // about 9 s at 1 ms a record
	spec := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(`{"problem":%q,"params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, sessiontest.Name, n, n)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runSubmit([]string{"-db", db, spec}, nil, &out, &errb); code != 0 {
		t.Fatalf("submit: %d %s", code, errb.String())
	}
	var id string
	fmt.Sscanf(out.String(), "run %s queued", &id)
	var first string
	waitUntil(t, time.Minute, "w0 to run the run", func() bool {
		first, _, _ = st.Runner(ctx, id)
		return strings.HasPrefix(first, "w0/")
	})
	// longer than -rescue-after on a live worker: still w0's first claim
	time.Sleep(after + 2*time.Second)
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if claim, _, _ := st.Runner(ctx, id); claim != first || r.Status != "running" {
		t.Fatalf("after %v on a live worker: %s under %q (first %q)\n%s", after+2*time.Second, r.Status, claim, first, jobStates(ctx, st))
	}
	_, lastBeat, _ := st.Runner(ctx, id)
	if err := w0.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w0.done
	startWorkerProc(t, db, "w1", "-slots", "1", "-rescue-after", after.String())
	var took time.Duration
	waitUntil(t, time.Minute, "w1 to take the run over", func() bool {
		claim, _, _ := st.Runner(ctx, id)
		took = time.Since(lastBeat)
		return strings.HasPrefix(claim, "w1/")
	})
	t.Logf("taken over %v after w0's last heartbeat (-rescue-after %v)", took.Round(time.Millisecond), after)
	if took < after || took > after+4*time.Second {
		t.Errorf("taken over %v after w0's last heartbeat, want about -rescue-after (%v)", took, after)
	}
	waitUntil(t, time.Minute, "the run's end", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Status != "running" && r.Status != "queued"
	})
	r, _ = st.Get(ctx, id)
	recs, err := st.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "done" || len(recs) != n+1 {
		t.Fatalf("the rescued run: %s with %d records", r.Status, len(recs))
	}
	for k, rec := range recs {
		if rec.K != k {
			t.Fatalf("record %d has k %d (a duplicate or a gap)", k, rec.K)
		}
	}
}

// The tests that drive worker processes on the shared cluster mostly wait
// (for heartbeats, rescues, runs that sleep between records) and each
// works in a database of its own: they call t.Parallel, so that their
// waits overlap.
//
// pgStore takes a new database of the PostgreSQL cluster the package's
// tests share (the test fails under CI without PostgreSQL, and is skipped
// otherwise), opens a store on it and registers the test problem; the
// store is closed at the test's end.
func pgStore(t *testing.T) (db string, st *pgstore.Store) {
	t.Helper()
	sessiontest.Register()
	db = pgtest.Shared(t).NewDB(t)
	st, err := pgstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return db, st
}
