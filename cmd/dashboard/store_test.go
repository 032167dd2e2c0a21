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
	"syscall"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/store"
)

// envServeArgs makes the test binary a dashboard server (its arguments
// separated by newlines), with the synthetic test problem registered: the
// restart and crash tests run it as a child process they can signal or
// kill.
const envServeArgs = "FWLAB_TEST_SERVE_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(envServeArgs); args != "" {
		sessiontest.Register()
		os.Exit(runServe(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	os.Exit(pgtest.Main(m)) // removes the PostgreSQL cluster the tests shared
}

type child struct {
	url string
	cmd *exec.Cmd
	out chan string // the rest of its output, line by line
}

// startChild starts `dashboard serve` with args as a child process.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServeArgs+"="+strings.Join(append([]string{"-addr", "127.0.0.1:0", "-data", ""}, args...), "\n"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("the server printed nothing: %s", stderr.String())
	}
	line := sc.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("serve printed %q", line)
	}
	c := &child{url: strings.TrimSuffix(strings.Fields(line[i:])[0], "/"), cmd: cmd, out: make(chan string, 100)}
	go func() {
		for sc.Scan() {
			select {
			case c.out <- sc.Text():
			default:
			}
		}
		close(c.out)
	}()
	return c
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s %v", url, resp.StatusCode, b, err)
	}
	return b
}

func post(t *testing.T, url string, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 201 {
		t.Fatalf("POST %s: %d %v", url, resp.StatusCode, err)
	}
	return out.ID
}

type runStatus struct {
	Status  string `json:"status"`
	Records int    `json:"records"`
}

func statusOf(t *testing.T, base, id string) runStatus {
	var st runStatus
	if err := json.Unmarshal(get(t, base+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

const slowSpec = `{"problem":"test-fake","params":{"n":1000000,"delay_us":200},"algorithms":[{"algo":"fw"}],"iters":1000000}`

// Run, stop with SIGINT, start again on the same file: the same runs, the
// same traces byte for byte, the live run interrupted with its records, and
// new ids unlike the old.
func TestRestartKeepsRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fwlab.db")
	c := startChild(t, "-db", db)
	var done []string
	for i := 0; i < 3; i++ {
		id := post(t, c.url+"/api/runs", fmt.Sprintf(`{"problem":"test-fake","params":{"n":%d},"algorithms":[{"algo":"fw"},{"algo":"afw"}],"replications":2,"iters":%d}`, 500+i, 500+i))
		waitDone(t, c.url, id)
		done = append(done, id)
	}
	live := post(t, c.url+"/api/runs", slowSpec)
	for statusOf(t, c.url, live).Records < 100 {
		time.Sleep(10 * time.Millisecond)
	}
	traces := map[string][]byte{}
	for _, id := range done {
		traces[id] = get(t, c.url+"/api/runs/"+id+"/trace")
		traces[id+"csv"] = get(t, c.url+"/api/runs/"+id+"/trace?format=csv")
	}
	liveBefore := get(t, c.url+"/api/runs/"+live+"/trace")
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v", err)
	}

	c2 := startChild(t, "-db", db)
	var l struct {
		Runs []struct {
			ID, Status string
		}
		Total int
	}
	if err := json.Unmarshal(get(t, c2.url+"/api/runs"), &l); err != nil {
		t.Fatal(err)
	}
	want := []string{live, done[2], done[1], done[0]}
	if l.Total != 4 {
		t.Fatalf("%d runs after the restart, want 4", l.Total)
	}
	for i, r := range l.Runs {
		wantStatus := map[bool]string{true: "interrupted", false: "done"}[i == 0]
		if r.ID != want[i] || r.Status != wantStatus {
			t.Errorf("run %d after the restart: %s %s, want %s %s", i, r.ID, r.Status, want[i], wantStatus)
		}
	}
	for _, id := range done {
		if got := get(t, c2.url+"/api/runs/"+id+"/trace"); !bytes.Equal(got, traces[id]) {
			t.Errorf("run %s: the trace differs after the restart (%d bytes, want %d)", id, len(got), len(traces[id]))
		}
		if got := get(t, c2.url+"/api/runs/"+id+"/trace?format=csv"); !bytes.Equal(got, traces[id+"csv"]) {
			t.Errorf("run %s: the CSV trace differs after the restart", id)
		}
	}
	// The interrupted run kept every record it had (and those made while
	// it stopped).
	liveAfter := get(t, c2.url+"/api/runs/"+live+"/trace")
	if !bytes.HasPrefix(liveAfter, liveBefore) {
		t.Errorf("the interrupted run's trace (%d bytes) does not extend the one before the stop (%d bytes)", len(liveAfter), len(liveBefore))
	}
	if st := statusOf(t, c2.url, live); st.Status != "interrupted" || st.Records < 100 {
		t.Errorf("interrupted run: %+v", st)
	}
	id := post(t, c2.url+"/api/runs", `{"problem":"test-fake","params":{"n":5},"algorithms":[{"algo":"fw"}],"iters":5}`)
	for _, old := range want {
		if id == old {
			t.Errorf("a new run got the old id %s", id)
		}
	}
}

// kill -9 during a run: on the next start the run is interrupted with its
// records up to at most about a second before the kill, and the file is
// sound.
func TestCrashKeepsRecords(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fwlab.db")
	c := startChild(t, "-db", db)
	id := post(t, c.url+"/api/runs", slowSpec)
	type sample struct {
		at      time.Time
		records int
	}
	var samples []sample
	start := time.Now()
	for time.Since(start) < 2500*time.Millisecond {
		samples = append(samples, sample{time.Now(), statusOf(t, c.url, id).Records})
		time.Sleep(20 * time.Millisecond)
	}
	last := statusOf(t, c.url, id).Records
	killed := time.Now()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	// The records the server held a second before the kill.
	before := 0
	for _, s := range samples {
		if s.at.Before(killed.Add(-time.Second)) {
			before = s.records
		}
	}
	if before == 0 {
		t.Fatal("no records a second before the kill: the run is too slow to test")
	}

	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Errorf("integrity check: %v", err)
	}
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	stored := r.Traces[0].Records
	t.Logf("records: %d a second before the kill, %d at the kill, %d stored", before, last, stored)
	if r.Status != store.StatusInterrupted || st.Recovered() != 1 {
		t.Errorf("status %s, recovered %d", r.Status, st.Recovered())
	}
	if stored < before {
		t.Errorf("%d records stored, fewer than the %d held a second before the kill", stored, before)
	}
	recs, err := st.Records(ctx, id, 0, 0, -1)
	if err != nil || len(recs) != stored {
		t.Fatalf("reading the stored records: %d, %v", len(recs), err)
	}
	for k, rec := range recs {
		if rec.K != k {
			t.Fatalf("record %d has k = %d", k, rec.K)
		}
	}
	st.Close()

	// A server started on the file shows the run as interrupted.
	c2 := startChild(t, "-db", db)
	if s := statusOf(t, c2.url, id); s.Status != "interrupted" || s.Records != stored {
		t.Errorf("after the restart: %+v", s)
	}
}

// `dashboard import` into the file a running server owns: the imported run
// is served at once, and the server's live run goes on untouched.
func TestImportBesideARunningServer(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "fwlab.db")
	file := filepath.Join(dir, "run.json")
	if _, stderr, code := solve(t, "-problem", "lasso", "-n", "30", "-p", "6", "-algo", "fw", "-iters", "40", "-format", "json", "-out", file); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	c := startChild(t, "-db", db)
	live := post(t, c.url+"/api/runs", slowSpec)
	out, stderr, code := runImportArgs("-db", db, file)
	if code != 0 {
		t.Fatalf("import: %d %s", code, stderr)
	}
	f := strings.Fields(out)
	if len(f) < 3 || !store.ValidID(f[2]) {
		t.Fatalf("import said %q", out)
	}
	if st := statusOf(t, c.url, f[2]); st.Status != "done" || st.Records != 41 {
		t.Errorf("the imported run on the server: %+v", st)
	}
	time.Sleep(300 * time.Millisecond)
	if st := statusOf(t, c.url, live); st.Status != "running" {
		t.Errorf("the server's live run became %s during the import", st.Status)
	}
	// A second server on the same file is refused.
	var errb strings.Builder
	if code := serve(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db}, io.Discard, &errb); code != 1 || !strings.Contains(errb.String(), "-db") {
		t.Errorf("a second server on the file: %d %q", code, errb.String())
	}
}
