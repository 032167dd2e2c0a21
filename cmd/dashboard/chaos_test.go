package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/fulldisk"
	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// The chaos tests: worker processes killed (kill -9) or stopped (SIGSTOP)
// in the middle of a run on a real throwaway cluster, watched through a
// front end (serve -slots 0) as a user's page would.

// fakeSpec is a run of the test problem making n records, about delayUS µs
// apart.
func fakeSpec(n, delayUS int) string {
	return fmt.Sprintf(`{"problem":%q,"params":{"n":"%d","delay_us":"%d"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, sessiontest.Name, n, delayUS, n)
}

// beatOf is what the API says of a run's worker.
type beatOf struct {
	Status     string            `json:"status"`
	Worker     string            `json:"worker"`
	WorkerBeat *store.WorkerBeat `json:"worker_beat"`
}

// silentEverywhere reports whether the run page's status, History's row
// (GET /api/runs) and, for a sweep's cell, the sweep page's data all say
// that run id's worker is silent; it returns the run page's view.
func silentEverywhere(t *testing.T, base, id, sweep string) (beatOf, bool) {
	t.Helper()
	var st beatOf
	if err := json.Unmarshal(get(t, base+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Runs []struct {
			ID string `json:"id"`
			beatOf
		} `json:"runs"`
	}
	if err := json.Unmarshal(get(t, base+"/api/runs?limit=100"), &list); err != nil {
		t.Fatal(err)
	}
	inList := false
	for _, r := range list.Runs {
		inList = inList || r.ID == id && r.WorkerBeat != nil && r.WorkerBeat.Silent && r.Worker == st.Worker
	}
	inSweep := sweep == ""
	if sweep != "" {
		var sw struct {
			Cells []struct {
				Run string `json:"run"`
				beatOf
			} `json:"cells"`
		}
		if err := json.Unmarshal(get(t, base+"/api/sweeps/"+sweep), &sw); err != nil {
			t.Fatal(err)
		}
		for _, c := range sw.Cells {
			inSweep = inSweep || c.Run == id && c.WorkerBeat != nil && c.WorkerBeat.Silent && c.Worker == st.Worker
		}
	}
	return st, st.WorkerBeat != nil && st.WorkerBeat.Silent && inList && inSweep
}

// wholeRecords returns run id's records, checking that they are n + 1
// records numbered 0…n (none twice, none missing), their wall times
// zeroed (the one field that differs between two runs of one spec).
func wholeRecords(t *testing.T, st *pgstore.Store, id string, n int) []solver.Record {
	t.Helper()
	recs, err := st.Records(context.Background(), id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n+1 {
		t.Fatalf("run %s has %d records, want %d", id, len(recs), n+1)
	}
	for k := range recs {
		if recs[k].K != k {
			t.Fatalf("run %s: record %d has k %d (a duplicate or a gap)", id, k, recs[k].K)
		}
		recs[k].Time = 0
	}
	return recs
}

// runEnded waits for run id to end and returns its status.
func runEnded(t *testing.T, st *pgstore.Store, id string, d time.Duration) string {
	t.Helper()
	var status string
	waitUntil(t, d, "run "+id+"'s end", func() bool {
		r, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		status = r.Status
		return !store.Live(r.Status)
	})
	return status
}

// TestKilledWorkerIsSeenSilentAndTakenOver: a worker process killed with
// kill -9 in the middle of a sweep's cell is called silent on the run page,
// in History and on the sweep page within 10 s, with the time left until
// its rescue; a second worker takes the run over within -rescue-after
// (and one rescue look) after the last heartbeat, and the run's records
// are those of the same spec run undisturbed. The processes run with a
// -rescue-after of 12 s rather than the default (30 s, checked from the
// flag's help): long enough that a silent worker is seen silent (after
// store.SilentAfter, 6 s) well before its run is rescued, and that a live
// worker beating every 2 s is never taken for dead on a busy machine.
func TestKilledWorkerIsSeenSilentAndTakenOver(t *testing.T) {
	t.Parallel()
	if d := queueRescueAfter(); d != queue.DefaultRescueAfter {
		t.Errorf("the default -rescue-after of worker is %v, want queue.DefaultRescueAfter (%v)", d, queue.DefaultRescueAfter)
	}
	db, st := pgStore(t)
	ctx := context.Background()
	const after = 12 * time.Second
	fe := startChild(t, "-db", db, "-slots", "0", "-rescue-after", after.String())
	w0 := startWorkerProc(t, db, "w0", "-slots", "1", "-rescue-after", after.String())
	const n = 4000 // about 4 s at 1 ms a record: w0 is killed well before its end
	sweepID := post(t, fe.url+"/api/sweeps", `{"base":`+fakeSpec(n, 1000)+`,"axes":[{"param":"seed","values":[1]}]}`)
	var id string
	waitUntil(t, time.Minute, "w0 to run the sweep's cell", func() bool {
		sw, err := st.GetSweep(ctx, sweepID)
		if err != nil || len(sw.Cells) == 0 || sw.Cells[0].RunID == "" {
			return false
		}
		id = sw.Cells[0].RunID
		claim, _, _ := st.Runner(ctx, id)
		r, _ := st.Get(ctx, id)
		return strings.HasPrefix(claim, "w0/") && r.Traces[0].Records > 0
	})
	if st, silent := silentEverywhere(t, fe.url, id, sweepID); silent || st.WorkerBeat == nil || st.Worker != "w0" {
		t.Fatalf("a beating worker: %+v, silent %v", st, silent)
	}
	_, lastBeat, _ := st.Runner(ctx, id)
	if err := w0.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-w0.done
	var seen beatOf
	waitUntil(t, time.Minute, "the pages to call w0 silent", func() bool {
		var ok bool
		seen, ok = silentEverywhere(t, fe.url, id, sweepID)
		return ok
	})
	took := time.Since(killed)
	t.Logf("w0 called silent %v after kill -9: %+v, rescue in %.1f s", took.Round(time.Millisecond), *seen.WorkerBeat, *seen.WorkerBeat.RescueIn)
	if took > 10*time.Second {
		t.Errorf("w0 was called silent %v after kill -9, want within 10 s", took)
	}
	if b := seen.WorkerBeat; b.RescueIn == nil || *b.RescueIn > after.Seconds()-store.SilentAfter.Seconds()+0.5 || *b.RescueIn < 0 {
		t.Errorf("the rescue countdown of a silent worker: %+v (-rescue-after %v)", b, after)
	}
	startWorkerProc(t, db, "w1", "-slots", "1", "-rescue-after", after.String())
	waitUntil(t, 2*time.Minute, "w1 to take the run over", func() bool {
		claim, _, _ := st.Runner(ctx, id)
		return strings.HasPrefix(claim, "w1/")
	})
	over := time.Since(lastBeat)
	bound := after + after/4 + 3*time.Second // a rescue looks every quarter of -rescue-after
	t.Logf("taken over %v after w0's last heartbeat (-rescue-after %v)", over.Round(time.Millisecond), after)
	if over < after || over > bound {
		t.Errorf("taken over %v after w0's last heartbeat, want between -rescue-after (%v) and %v", over, after, bound)
	}
	if s := runEnded(t, st, id, 3*time.Minute); s != store.StatusDone {
		t.Fatalf("the rescued run ended %s", s)
	}
	got := wholeRecords(t, st, id, n)
	// the same spec run undisturbed
	ref := post(t, fe.url+"/api/runs", strings.Replace(fakeSpec(n, 0), `"algorithms"`, `"seed":1,"algorithms"`, 1))
	if s := runEnded(t, st, ref, 3*time.Minute); s != store.StatusDone {
		t.Fatalf("the reference run ended %s", s)
	}
	if want := wholeRecords(t, st, ref, n); !reflect.DeepEqual(got, want) {
		t.Errorf("the rescued run's records differ from those of the same spec run undisturbed")
	}
}

// queueRescueAfter is the default -rescue-after of worker and serve.
func queueRescueAfter() time.Duration {
	var out, errb bytes.Buffer
	runWorker([]string{"-h"}, &out, &errb)
	s := errb.String()
	i := strings.Index(s, "-rescue-after duration")
	if i < 0 {
		return 0
	}
	j := strings.Index(s[i:], "(default ")
	if j < 0 {
		return 0
	}
	d, _ := time.ParseDuration(strings.TrimSuffix(strings.Fields(s[i+j+len("(default "):])[0], ")"))
	return d
}

// stopInsideTx stops worker w (SIGSTOP) inside the transaction of an append
// to run id: the test holds the run's trace row, the worker's next append
// waits on it after it has locked the run's row, the worker is stopped,
// and the test lets the append go on, so that the database holds the
// stopped worker's open transaction with the run's row locked.
func stopInsideTx(t *testing.T, st *pgstore.Store, w *workerProc, id string) {
	t.Helper()
	ctx := context.Background()
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM traces WHERE run_id = $1 AND idx = 0 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the worker's append to wait inside its transaction", func() bool {
		var n int
		err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
			AND query LIKE 'SELECT records FROM traces%FOR UPDATE'`).Scan(&n)
		return err == nil && n > 0
	})
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.cmd.Process.Signal(syscall.SIGCONT) })
	time.Sleep(200 * time.Millisecond) // the signal has landed
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the stopped worker's transaction to sit idle holding the run", func() bool {
		var n int
		err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'
			AND query LIKE 'SELECT records FROM traces%FOR UPDATE'`).Scan(&n)
		return err == nil && n > 0
	})
}

// TestStoppedWorkerBlocksNeitherRescueNorCancel: a worker process stopped
// (SIGSTOP) inside its transaction, with the run's row locked, does not
// hold the lock for long: a second worker takes its run over within
// -rescue-after (and one rescue look) of the stop, and the stopped worker,
// continued (SIGCONT) later, writes nothing; a run whose worker is stopped
// the same way is cancelled by eight DELETEs at once and `dashboard
// cancel`, each answering within 5 s, while History (GET /api/runs) still
// answers within 5 s; continued, the worker leaves the run cancelled.
func TestStoppedWorkerBlocksNeitherRescueNorCancel(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	const after = 6 * time.Second
	fe := startChild(t, "-db", db, "-slots", "0", "-rescue-after", after.String())
	w0 := startWorkerProc(t, db, "w0", "-slots", "1", "-rescue-after", after.String())
	const n = 5000 // about 5 s at 1 ms a record: w0 is stopped well before its end
	id := post(t, fe.url+"/api/runs", fakeSpec(n, 1000))
	waitUntil(t, time.Minute, "w0 to run the run", func() bool {
		claim, _, _ := st.Runner(ctx, id)
		r, _ := st.Get(ctx, id)
		return strings.HasPrefix(claim, "w0/") && r.Traces[0].Records > 0
	})
	stopInsideTx(t, st, w0, id)
	stopped := time.Now()
	w1 := startWorkerProc(t, db, "w1", "-slots", "1", "-rescue-after", after.String())
	var claim string
	waitUntil(t, time.Minute, "w1 to take the run over", func() bool {
		claim, _, _ = st.Runner(ctx, id)
		return strings.HasPrefix(claim, "w1/")
	})
	took := time.Since(stopped)
	t.Logf("taken over %v after w0 was stopped inside its transaction (-rescue-after %v)", took.Round(time.Millisecond), after)
	if bound := after + after/4 + 3*time.Second; took > bound {
		t.Errorf("taken over %v after w0 was stopped, want within %v", took, bound)
	}
	// w0 continues while w1 runs the run: it writes nothing
	if err := w0.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if s := runEnded(t, st, id, 3*time.Minute); s != store.StatusDone {
		t.Fatalf("the rescued run ended %s", s)
	}
	if got, _, _ := st.Runner(ctx, id); got != claim {
		t.Errorf("the run's claim is %q after w0 continued, w1's was %q", got, claim)
	}
	wholeRecords(t, st, id, n)
	var batches int
	st.Pool().QueryRow(ctx, `SELECT count(*) FROM batches WHERE run_id = $1`, id).Scan(&batches)
	ended := time.Now()
	// at least three heartbeats after the run's end, it still has those
	// batches and records (looked at once the cancel below is checked,
	// rather than after a sleep of their own)
	stillWhole := func() {
		t.Helper()
		if d := 3*store.BeatEvery - time.Since(ended); d > 0 {
			time.Sleep(d)
		}
		var later int
		st.Pool().QueryRow(ctx, `SELECT count(*) FROM batches WHERE run_id = $1`, id).Scan(&later)
		if later != batches {
			t.Errorf("the run's batches went from %d to %d after its end", batches, later)
		}
		wholeRecords(t, st, id, n)
	}

	// cancel: a run whose worker is stopped inside its transaction
	cid := post(t, fe.url+"/api/runs", fakeSpec(1_000_000, 1000))
	var w *workerProc
	waitUntil(t, time.Minute, "a worker to run the run", func() bool {
		claim, _, _ := st.Runner(ctx, cid)
		r, _ := st.Get(ctx, cid)
		switch {
		case strings.HasPrefix(claim, "w0/"):
			w = w0
		case strings.HasPrefix(claim, "w1/"):
			w = w1
		}
		return w != nil && r.Traces[0].Records > 0
	})
	stopInsideTx(t, st, w, cid)
	client := &http.Client{Timeout: time.Minute}
	type answer struct {
		what string
		code int
		took time.Duration
	}
	answers := make(chan answer, 10)
	var wg sync.WaitGroup
	start := time.Now()
	do := func(what, method, url string) {
		defer wg.Done()
		req, _ := http.NewRequest(method, url, nil)
		resp, err := client.Do(req)
		code := 0
		if err == nil {
			code = resp.StatusCode
			resp.Body.Close()
		}
		answers <- answer{what, code, time.Since(start)}
	}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go do(fmt.Sprintf("DELETE #%d", i+1), "DELETE", fe.url+"/api/runs/"+cid)
	}
	wg.Add(2)
	go do("GET /api/runs", "GET", fe.url+"/api/runs")
	go func() {
		defer wg.Done()
		var out, errb bytes.Buffer
		code := runCancel([]string{"-db", db, cid}, &out, &errb)
		// the run is cancelled by it or by a DELETE first
		if code == 0 || strings.Contains(errb.String(), "the run has ended (cancelled)") {
			code = 200
		}
		answers <- answer{"dashboard cancel", code, time.Since(start)}
	}()
	wg.Wait()
	close(answers)
	for a := range answers {
		want := http.StatusAccepted
		if a.what == "GET /api/runs" || a.what == "dashboard cancel" {
			want = http.StatusOK
		}
		if a.code != want || a.took > 5*time.Second {
			t.Errorf("%s with the worker stopped inside its transaction: %d after %v, want %d within 5 s", a.what, a.code, a.took, want)
		}
	}
	if r, _ := st.Get(ctx, cid); r.Status != store.StatusCancelled {
		t.Errorf("the run is %s after the cancels", r.Status)
	}
	if err := w.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * store.BeatEvery)
	if r, _ := st.Get(ctx, cid); r.Status != store.StatusCancelled {
		t.Errorf("the run is %s once its worker continued, want still cancelled", r.Status)
	}
	stillWhole()
}

// TestUnreadableValuesAreRefusedOnBothStores: a bundle whose info.fstar is
// "NaN" or "Inf", and a sweep whose name holds a NUL character, are
// refused with 400 naming the field by a server on SQLite and one on
// PostgreSQL, and History (GET /api/runs) still answers 200 for everyone.
func TestUnreadableValuesAreRefusedOnBothStores(t *testing.T) {
	db, _ := pgStore(t)
	bundle, err := os.ReadFile("../../examples/run.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, db string }{{"sqlite", filepath.Join(t.TempDir(), "runs.db")}, {"postgres", db}} {
		t.Run(c.name, func(t *testing.T) {
			srv := startChild(t, "-db", c.db)
			for _, v := range []string{`"NaN"`, `"Inf"`, `"-Inf"`} {
				bad := bytes.Replace(bundle, []byte(`"blocks":1,"fstar":0.2384020835245135`), []byte(`"blocks":1,"fstar":`+v), 1)
				if bytes.Equal(bad, bundle) {
					t.Fatal("the example bundle's info.fstar was not found")
				}
				code, field := postJSON(t, srv.url+"/api/runs/import", bad)
				if code != http.StatusBadRequest || field != "info.fstar" {
					t.Errorf("importing a bundle with info.fstar %s: %d naming %q, want 400 naming info.fstar", v, code, field)
				}
			}
			code, field := postJSON(t, srv.url+"/api/sweeps", []byte(`{"name":"a\u0000b","base":`+fakeSpec(10, 0)+`,"axes":[{"param":"seed","values":[1,2]}]}`))
			if code != http.StatusBadRequest || field != "name" {
				t.Errorf("a sweep named with a NUL: %d naming %q, want 400 naming name", code, field)
			}
			// a name is kept as given (a queued sweep once lost it)
			id := post(t, srv.url+"/api/sweeps", `{"name":"ρ ≥ 0.1 \u00e9","note":"n","base":`+fakeSpec(10, 0)+`,"axes":[{"param":"seed","values":[1,2]}]}`)
			var sw struct{ Name, Note string }
			if err := json.Unmarshal(get(t, srv.url+"/api/sweeps/"+id), &sw); err != nil || sw.Name != "ρ ≥ 0.1 é" || sw.Note != "n" {
				t.Errorf("a sweep's name and note read back %+v, %v", sw, err)
			}
			get(t, srv.url+"/api/runs")
			get(t, srv.url+"/api/sweeps")
		})
	}
}

// postJSON posts body and returns the status and the field an error names.
func postJSON(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Field string }
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Field
}

// smallFS mounts a tmpfs of size (as root) owned by the PostgreSQL user,
// unmounted when the test ends (after the cluster that uses it is gone:
// call it before pgtest.Start). Without root the test fails under CI and
// is skipped otherwise.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	// in the system's temporary folder itself, which the PostgreSQL user
	// can pass through (a test's own folder it cannot)
	dir, err := os.MkdirTemp("", "fwlab-full-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	fulldisk.Mount(t, dir, size)
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPostgresOnAFullDisk: the database of a front end and a worker lives
// on a 24 MiB file system that two long runs fill. Each run ends failed,
// its message naming the database and the full disk, its stored records a
// whole prefix; /healthz says degraded naming the database and new runs
// get 503; once room is made, /healthz is ok again, a new run is done, and
// the failed runs' records are all still there.
func TestPostgresOnAFullDisk(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	dir := smallFS(t, "24m")
	c := pgtest.Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLESPACE small LOCATION '` + dir + `'`, `CREATE DATABASE full_disk TABLESPACE small`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)
	db := c.URL("full_disk")
	st, err := pgstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "2")
	// room to free once the disk is full
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 3_000_000 // far beyond 24 MiB
	ids := []string{post(t, srv.url+"/api/runs", fakeSpec(n, 0)), post(t, srv.url+"/api/runs", fakeSpec(n, 0))}
	kept := map[string]int{}
	for _, id := range ids {
		if s := runEnded(t, st, id, 5*time.Minute); s != store.StatusFailed {
			t.Fatalf("run %s on a full disk ended %s", id, s)
		}
		r, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Message, pgstore.Redact(db)) || !strings.Contains(r.Message, "No space left") {
			t.Errorf("run %s: message %q, want one naming the database and the full disk", id, r.Message)
		}
		kept[id] = r.Traces[0].Records
		recs, err := st.Records(ctx, id, 0, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		for k := range recs {
			if recs[k].K != k {
				t.Fatalf("run %s: record %d has k %d", id, k, recs[k].K)
			}
		}
	}
	var code int
	var body string
	waitUntil(t, time.Minute, "/healthz to say degraded", func() bool {
		code, body = getStatus(t, srv.url+"/healthz")
		return code == http.StatusServiceUnavailable
	})
	if !strings.Contains(body, "degraded") || !strings.Contains(body, pgstore.Redact(db)) {
		t.Errorf("/healthz on a full disk: %d %s", code, body)
	}
	if code, _ := postJSON(t, srv.url+"/api/runs", []byte(fakeSpec(10, 0))); code != http.StatusServiceUnavailable {
		t.Errorf("a new run on a full disk: %d, want 503", code)
	}

	// room is made: healthy again, runs run, nothing lost
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "/healthz to say ok once room was made", func() bool {
		code, body = getStatus(t, srv.url+"/healthz")
		return code == http.StatusOK
	})
	small := post(t, srv.url+"/api/runs", fakeSpec(10, 0))
	if s := runEnded(t, st, small, 2*time.Minute); s != store.StatusDone {
		t.Errorf("a run once room was made ended %s", s)
	}
	for _, id := range ids {
		r, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusFailed || r.Traces[0].Records != kept[id] {
			t.Errorf("run %s after room was made: %s with %d records, was failed with %d", id, r.Status, r.Traces[0].Records, kept[id])
		}
	}
}

// getStatus returns the status and body of GET url.
func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
