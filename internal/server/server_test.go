package server

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func init() { sessiontest.Register() }

// client never keeps connections alive, so that goroutine counts settle.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

func newTestServer(t testing.TB, o Options) (*Server, *httptest.Server) {
	t.Helper()
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("server close: %v", err)
		}
		ts.Close()
	})
	return srv, ts
}

func fakeRun(n int, algos ...string) spec.Run {
	sp := spec.Run{Problem: sessiontest.Name, Params: spec.Params{"n": strconv.Itoa(n)}, Seed: 3, Iters: n}
	for _, a := range algos {
		sp.Algorithms = append(sp.Algorithms, spec.Algo{Algo: a})
	}
	return sp
}

func do(t testing.TB, method, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	// Uncompressed unless a test asks otherwise: gzip is slow under -race.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// create POSTs the spec and returns the new run's id.
func create(t testing.TB, ts *httptest.Server, sp spec.Run) string {
	t.Helper()
	code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, sp))
	if code != http.StatusCreated {
		t.Fatalf("POST /api/runs: %d %s", code, body)
	}
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); err != nil || out.ID == "" {
		t.Fatalf("POST /api/runs body %s: %v", body, err)
	}
	return out.ID
}

func status(t testing.TB, ts *httptest.Server, id string) session.Status {
	t.Helper()
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id, nil)
	if code != http.StatusOK {
		t.Fatalf("GET run: %d %s", code, body)
	}
	var st session.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// instancePanels returns a run's instance panels, which its status leaves
// out (GET /api/runs/{id}/panels).
func instancePanels(t testing.TB, ts *httptest.Server, id string) map[string]any {
	t.Helper()
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/panels", nil)
	if code != http.StatusOK {
		t.Fatalf("GET panels: %d %s", code, body)
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitFinished(t testing.TB, srv *Server, id string) *session.Run {
	t.Helper()
	r, ok := srv.Manager().Get(id)
	if !ok {
		t.Fatalf("no run %s", id)
	}
	select {
	case <-r.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("run %s did not finish", id)
	}
	return r
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestAPIErrors(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxBody: 4096})
	good := fakeRun(10, "fw")
	bad := func(f func(*spec.Run)) []byte {
		sp := fakeRun(10, "fw")
		f(&sp)
		return mustJSON(t, sp)
	}
	cases := []struct {
		name   string
		method string
		path   string
		body   []byte
		code   int
		field  string
	}{
		{"bad problem", "POST", "/api/runs", bad(func(s *spec.Run) { s.Problem = "no-such" }), 400, "problem"},
		{"missing problem", "POST", "/api/runs", bad(func(s *spec.Run) { s.Problem = "" }), 400, "problem"},
		{"bad param", "POST", "/api/runs", bad(func(s *spec.Run) { s.Params["n"] = "-3" }), 400, "params.n"},
		{"param of wrong JSON type", "POST", "/api/runs", []byte(`{"problem":"test-fake","params":{"n":[1]},"algorithms":[{"algo":"fw"}]}`), 400, "params.n"},
		{"unknown param", "POST", "/api/runs", bad(func(s *spec.Run) { s.Params["m"] = "3" }), 400, "params.m"},
		{"algorithm not for problem", "POST", "/api/runs", bad(func(s *spec.Run) { s.Algorithms = []spec.Algo{{Algo: "fw"}, {Algo: "bcfw"}} }), 400, "algorithms[1].algo"},
		{"bad algorithm param", "POST", "/api/runs", bad(func(s *spec.Run) { s.Algorithms[0].Rho = 2 }), 400, "algorithms[0].rho"},
		{"no algorithms", "POST", "/api/runs", bad(func(s *spec.Run) { s.Algorithms = nil }), 400, "algorithms"},
		{"bad replications", "POST", "/api/runs", bad(func(s *spec.Run) { s.Replications = 1000 }), 400, "replications"},
		{"unknown field", "POST", "/api/runs", []byte(`{"problem":"test-fake","iter":5,"algorithms":[{"algo":"fw"}]}`), 400, "iter"},
		{"wrong type", "POST", "/api/runs", []byte(`{"problem":"test-fake","iters":"many","algorithms":[{"algo":"fw"}]}`), 400, "iters"},
		{"not JSON", "POST", "/api/runs", []byte(`{"problem":`), 400, ""},
		{"empty body", "POST", "/api/runs", nil, 400, ""},
		{"two objects", "POST", "/api/runs", append(mustJSON(t, good), mustJSON(t, good)...), 400, ""},
		{"body too large", "POST", "/api/runs", []byte(`{"problem":"` + strings.Repeat("x", 5000) + `"}`), 413, ""},
		{"unknown run", "GET", "/api/runs/r999", nil, 404, "id"},
		{"unknown run cancel", "DELETE", "/api/runs/r999", nil, 404, "id"},
		{"unknown run pause", "POST", "/api/runs/r999/pause", nil, 404, "id"},
		{"unknown run trace", "GET", "/api/runs/r999/trace", nil, 404, "id"},
		{"unknown run panels", "GET", "/api/runs/r999/panels", nil, 404, "id"},
		{"unknown run websocket", "GET", "/ws/runs/r999", nil, 404, "id"},
		{"bad trace format", "GET", "/api/runs/r1/trace?format=xml", nil, 400, "format"},
		{"method not allowed", "PUT", "/api/runs", nil, 405, ""},
		{"method not allowed on run", "POST", "/api/runs/r1", nil, 405, ""},
		{"unknown endpoint", "GET", "/api/nothing", nil, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := do(t, c.method, ts.URL+c.path, c.body)
			if code != c.code {
				t.Fatalf("status %d, want %d (%s)", code, c.code, body)
			}
			var e apiError
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %q is not JSON: %v", body, err)
			}
			if e.Field != c.field || e.Error == "" {
				t.Errorf("error %+v, want field %q and a message", e, c.field)
			}
		})
	}
	// The failed requests created nothing.
	code, body := do(t, "GET", ts.URL+"/api/runs", nil)
	var list struct {
		Runs  []RunRow `json:"runs"`
		Total int      `json:"total"`
	}
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.Runs) != 0 || list.Total != 0 {
		t.Errorf("run list after errors: %d %s", code, body)
	}
	if code, body := do(t, "GET", ts.URL+"/healthz", nil); code != 200 || string(body) != "ok" {
		t.Errorf("healthz: %d %q", code, body)
	}
}

func TestRunLifecycleAPI(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := fakeRun(300, "ssfw-as", "fista")
	sp.Replications = 2
	id := create(t, ts, sp)
	waitFinished(t, srv, id)
	st := status(t, ts, id)
	if st.ID != id || st.Status != "done" || st.Spec.Problem != sessiontest.Name || st.Info.Samples != 300 || len(st.Traces) != 4 {
		t.Fatalf("status %+v", st)
	}
	for i, tr := range st.Traces {
		if tr.Trace != i || tr.Records != 301 || tr.Status != solver.StatusMaxIters || tr.Summary == nil || tr.Replication != i%2 {
			t.Errorf("trace %+v", tr)
		}
	}
	code, body := do(t, "GET", ts.URL+"/api/runs", nil)
	var list struct {
		Runs  []RunRow `json:"runs"`
		Total int      `json:"total"`
	}
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.Runs) != 1 || list.Total != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	if row := list.Runs[0]; row.ID != id || row.Status != "done" || row.Problem != sessiontest.Name || row.Ended == nil ||
		len(row.Final) != 4 || row.Final[3].Gap == nil || row.Params["iters"] != float64(300) || row.Instance.Samples != 300 {
		t.Errorf("list row: %s", body)
	}
	code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/panels", nil)
	if code != 200 || !strings.Contains(string(body), `"data"`) {
		t.Errorf("panels: %d %s", code, body)
	}
	// Cancelling a finished run changes nothing.
	code, body = do(t, "DELETE", ts.URL+"/api/runs/"+id, nil)
	if code != 202 || !strings.Contains(string(body), `"status":"done"`) {
		t.Errorf("cancel of a finished run: %d %s", code, body)
	}
}

func TestCatalogue(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	code, body := do(t, "GET", ts.URL+"/api/scenarios", nil)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var c Catalogue
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	var fake *Problem
	for i := range c.Problems {
		if c.Problems[i].Name == sessiontest.Name {
			fake = &c.Problems[i]
		}
	}
	if fake == nil {
		t.Fatalf("catalogue lacks %s: %s", sessiontest.Name, body)
	}
	n := fake.Params[0]
	if n.Name != "n" || n.Kind != "int" || n.Default != "1000" || n.Min == nil || *n.Min != 1 || n.Max != nil || n.Rule != "must be a whole number ≥ 1" {
		t.Errorf("param n: %+v", n)
	}
	if fake.Params[4].Kind != "path" || len(fake.Algorithms) != 4 || len(fake.Defaults) != 2 || fake.Defaults[0].Schedule != "paper" {
		t.Errorf("problem: %+v", fake)
	}
	if len(c.Algorithms) != len(spec.AlgoNames) || c.Defaults.Iters != spec.DefaultIters || c.Defaults.MaxRecords != session.DefaultMaxRecords {
		t.Errorf("algorithms %+v defaults %+v", c.Algorithms, c.Defaults)
	}
	for _, a := range c.Algorithms {
		if (a.NotInPaper != "") != (a.Name == "cd") {
			t.Errorf("algorithm %s: not_in_paper %q (only cd, coordinate descent, is a baseline outside the paper)", a.Name, a.NotInPaper)
		}
	}
	// the problems' rules for the page are the scenarios' declarations:
	// the structural SVMs set every method's step and report an average
	declared := map[string]bool{}
	for _, p := range c.Problems {
		sc, ok := scenarios.Lookup(p.Name)
		if !ok || p.OwnSteps != sc.OwnSteps || p.Averages != sc.Averages {
			t.Errorf("problem %s: own_steps %v, averages %v; the scenario declares %+v", p.Name, p.OwnSteps, p.Averages, sc)
		}
		declared[p.Name] = p.OwnSteps && p.Averages
	}
	if !declared["ssvm-ocr"] || !declared["ssvm-chain"] || declared["lasso"] {
		t.Errorf("own steps and averages: %v, want the two structural SVMs only", declared)
	}
	code, body = do(t, "GET", ts.URL+"/api/presets", nil)
	var presets []PresetEntry
	if err := json.Unmarshal(body, &presets); code != 200 || err != nil {
		t.Errorf("presets: %d %s", code, body)
	}
}

// traceLine is one JSONL line of a trace download.
type traceLine struct {
	Trace       *int    `json:"trace"`
	Algo        *string `json:"algo"`
	Replication *int    `json:"replication"`
	solver.Record
}

func TestTraceDownloads(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	const per = 701 // records per trace: k = 0…700
	sp := fakeRun(per-1, "ssfw-as", "fw")
	sp.Replications = 2
	sp.EvalEvery = 7
	id := create(t, ts, sp)
	run := waitFinished(t, srv, id)
	total := 0
	for _, tr := range run.Traces() {
		total += tr.Len()
	}
	if total != 4*per {
		t.Fatalf("%d records stored", total)
	}
	// Each trace's stored records, read once (a finished run reads them
	// from the store: one query per record made this test take 100 s
	// under the race detector).
	stored := make([][]solver.Record, len(run.Traces()))
	for i, tr := range run.Traces() {
		if stored[i] = tr.Records(0, per); len(stored[i]) != per {
			t.Fatalf("trace %d: %d records read back, want %d", i, len(stored[i]), per)
		}
	}

	// JSON Lines: one object per record, tagged, in trace order.
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/trace?format=jsonl", nil)
	if code != 200 {
		t.Fatalf("jsonl: %d %s", code, body)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	i := 0
	for sc.Scan() {
		var ln traceLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ln); err != nil {
			t.Fatalf("line %d %q: %v", i+1, sc.Text(), err)
		}
		tr := run.Traces()[i/per]
		want := stored[i/per][i%per]
		if ln.Trace == nil || *ln.Trace != tr.Index || *ln.Algo != tr.Algo || *ln.Replication != tr.Replication {
			t.Fatalf("line %d tags %v %v %v", i+1, ln.Trace, ln.Algo, ln.Replication)
		}
		if !sameRecord(ln.Record, want) {
			t.Fatalf("line %d: %+v, stored %+v", i+1, ln.Record, want)
		}
		i++
	}
	if i != total {
		t.Errorf("jsonl has %d lines, want %d", i, total)
	}
	// The default format is JSON Lines; compressed on request.
	resp, err := client.Get(ts.URL + "/api/runs/" + id + "/trace") // asks for gzip, decompresses transparently
	if err != nil {
		t.Fatal(err)
	}
	def, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !resp.Uncompressed || !bytes.Equal(def, body) {
		t.Errorf("default format: gzip %v, same as jsonl %v, err %v", resp.Uncompressed, bytes.Equal(def, body), err)
	}

	// CSV: the contract's header, one row per record, empty cells where not evaluated.
	code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/trace?format=csv", nil)
	if code != 200 {
		t.Fatalf("csv: %d %s", code, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got+"\n" != csvHeader {
		t.Errorf("header %q", got)
	}
	if len(rows)-1 != total {
		t.Fatalf("csv has %d rows, want %d", len(rows)-1, total)
	}
	for j, row := range rows[1:] {
		tr := run.Traces()[j/per]
		rec := stored[j/per][j%per]
		if row[0] != strconv.Itoa(tr.Index) || row[1] != tr.Algo || row[2] != strconv.Itoa(tr.Replication) || row[3] != strconv.Itoa(rec.K) || row[6] != rec.Step {
			t.Fatalf("row %d: %v", j+1, row)
		}
		if rec.Evaluated() != (row[14] != "") || (rec.Gap != nil) != (row[15] != "") || (rec.GradErr != nil) != (row[16] != "") {
			t.Fatalf("row %d evaluation cells %v for %+v", j+1, row[14:], rec)
		}
		if rec.Evaluated() {
			if f, _ := strconv.ParseFloat(row[14], 64); f != *rec.Objective {
				t.Fatalf("row %d objective %s, stored %v", j+1, row[14], *rec.Objective)
			}
		}
		if d, _ := strconv.Atoi(row[12]); d != rec.Drops {
			t.Fatalf("row %d drops %s", j+1, row[12])
		}
	}
	// Stochastic traces carry grad_err on evaluation iterations, others not.
	if rows[1+7][16] == "" || rows[1+2*per+7][16] != "" { // k = 7 is evaluated
		t.Errorf("grad_err cells: %q (ssfw-as) %q (fw)", rows[1+7][16], rows[1+2*per+7][16])
	}
}

func sameRecord(a, b solver.Record) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// wsMessage is any message of the stream.
type wsMessage struct {
	Type    string         `json:"type"`
	Run     session.Status `json:"run"`
	Batches []struct {
		Trace   int             `json:"trace"`
		From    int             `json:"from"`
		Records []solver.Record `json:"records"`
	} `json:"batches"`
}

func dial(t testing.TB, ts *httptest.Server, id string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws/runs/" + id
	c, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	resp.Body.Close()
	return c
}

// readStream reads messages into ch until the connection ends; the close
// error goes to errc.
func readStream(c *websocket.Conn, ch chan<- wsMessage, errc chan<- error) {
	defer close(ch)
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			errc <- err
			return
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			errc <- fmt.Errorf("message %.200s: %w", b, err)
			return
		}
		ch <- m
	}
}

// collector checks the stream's invariants as messages arrive.
type collector struct {
	t        testing.TB
	got      [][]solver.Record
	statuses []session.Status
	done     *session.Status
	n        int
}

func (c *collector) add(m wsMessage) {
	c.t.Helper()
	c.n++
	switch m.Type {
	case "hello":
		if c.n != 1 {
			c.t.Fatalf("hello as message %d", c.n)
		}
		c.got = make([][]solver.Record, len(m.Run.Traces))
	case "records":
		if c.got == nil || c.done != nil {
			c.t.Fatalf("records before hello or after done")
		}
		for _, b := range m.Batches {
			if b.From != len(c.got[b.Trace]) {
				c.t.Fatalf("trace %d batch from %d, but %d records received", b.Trace, b.From, len(c.got[b.Trace]))
			}
			for j, r := range b.Records {
				if r.K != b.From+j {
					c.t.Fatalf("trace %d record at %d has k = %d", b.Trace, b.From+j, r.K)
				}
			}
			c.got[b.Trace] = append(c.got[b.Trace], b.Records...)
		}
	case "status":
		c.statuses = append(c.statuses, m.Run)
	case "done":
		run := m.Run
		c.done = &run
	default:
		c.t.Fatalf("unknown message type %q", m.Type)
	}
}

func TestWebsocketStream(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := fakeRun(2000, "ssfw-as", "fista")
	sp.Params["delay_us"] = "20"
	id := create(t, ts, sp)
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	col := &collector{t: t}
	start := time.Now()
	for m := range ch {
		col.add(m)
	}
	elapsed := time.Since(start)
	err := <-errc
	if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("stream ended with %v, want a normal close", err)
	}
	if col.done == nil || col.done.Status != "done" {
		t.Fatalf("no done message (or wrong status): %+v", col.done)
	}
	run := waitFinished(t, srv, id)
	for i, tr := range run.Traces() {
		if len(col.got[i]) != tr.Len() || tr.Len() != 2001 {
			t.Errorf("trace %d: %d records streamed, %d stored", i, len(col.got[i]), tr.Len())
		}
		stored := tr.Records(0, tr.Len()) // read once: one store query, not one a record
		for j, r := range col.got[i][:min(len(col.got[i]), len(stored))] {
			if !sameRecord(r, stored[j]) {
				t.Fatalf("trace %d record %d differs from the store", i, j)
			}
		}
	}
	// Coalescing: at most ~30 records messages per second.
	if limit := 3 + int(elapsed.Seconds()*31); col.n-len(col.statuses)-2 > limit {
		t.Errorf("%d records messages in %v", col.n-len(col.statuses)-2, elapsed)
	}
	if len(col.statuses) == 0 {
		t.Error("no status message although traces finished during the stream")
	}
	waitFor(t, "stream handler to return", func() bool { return srv.openStreams() == 0 })
}

func TestWebsocketPauseStepResume(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := fakeRun(1500, "ssfw-as", "fw")
	sp.Params["delay_us"] = "50"
	id := create(t, ts, sp)
	run, _ := srv.Manager().Get(id)
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	col := &collector{t: t}
	col.add(<-ch)

	waitFor(t, "records", func() bool { return run.Traces()[1].Len() > 20 })
	code, body := do(t, "POST", ts.URL+"/api/runs/"+id+"/pause", nil)
	var st session.Status
	if err := json.Unmarshal(body, &st); code != 202 || err != nil || st.Status != "paused" {
		t.Fatalf("pause: %d %s", code, body)
	}
	waitFor(t, "parked", run.Parked)
	counts := []int{run.Traces()[0].Len(), run.Traces()[1].Len()}
	// The stream delivers everything up to the pause, and a status message.
	sawPaused := false
	for !(len(col.got[0]) == counts[0] && len(col.got[1]) == counts[1] && sawPaused) {
		m := <-ch
		col.add(m)
		if m.Type == "status" && m.Run.Status == "paused" {
			sawPaused = true
		}
	}
	for step := 1; step <= 2; step++ {
		code, body = do(t, "POST", ts.URL+"/api/runs/"+id+"/step", nil)
		if code != 202 {
			t.Fatalf("step: %d %s", code, body)
		}
		for len(col.got[0]) < counts[0]+step || len(col.got[1]) < counts[1]+step {
			col.add(<-ch)
		}
		waitFor(t, "parked after step", run.Parked)
	}
	// Nothing more arrives while paused.
	select {
	case m := <-ch:
		if m.Type == "records" {
			t.Fatalf("records while paused after two steps: %+v", m.Batches)
		}
		col.add(m)
	case <-time.After(100 * time.Millisecond):
	}
	if len(col.got[0]) != counts[0]+2 || len(col.got[1]) != counts[1]+2 {
		t.Fatalf("after two steps: %d %d records, want %d %d", len(col.got[0]), len(col.got[1]), counts[0]+2, counts[1]+2)
	}
	code, body = do(t, "POST", ts.URL+"/api/runs/"+id+"/resume", nil)
	if code != 202 || !strings.Contains(string(body), `"status":"running"`) {
		t.Fatalf("resume: %d %s", code, body)
	}
	for m := range ch {
		col.add(m)
	}
	if col.done == nil || col.done.Status != "done" || len(col.got[0]) != 1501 || len(col.got[1]) != 1501 {
		t.Fatalf("after resume: done %v, %d %d records", col.done, len(col.got[0]), len(col.got[1]))
	}
}

func TestCancelOverAPI(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := fakeRun(1_000_000, "ssfw-as", "fw")
	sp.Params["delay_us"] = "100"
	id := create(t, ts, sp)
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	run, _ := srv.Manager().Get(id)
	waitFor(t, "records", func() bool { return run.Traces()[0].Len() > 10 })
	code, body := do(t, "DELETE", ts.URL+"/api/runs/"+id, nil)
	if code != 202 || strings.TrimSpace(string(body)) != `{"status":"cancelled"}` {
		t.Fatalf("cancel: %d %s", code, body)
	}
	col := &collector{t: t}
	for m := range ch {
		col.add(m)
	}
	if col.done == nil || col.done.Status != "cancelled" {
		t.Fatalf("done message %+v", col.done)
	}
	for _, tr := range col.done.Traces {
		if tr.Status != solver.StatusCancelled || tr.Records >= 1_000_000 || tr.Records != len(col.got[tr.Trace]) {
			t.Errorf("trace %+v, %d streamed", tr, len(col.got[tr.Trace]))
		}
	}
}

// A client that never reads must not slow the run down or lose records, and
// dropping it must leave no goroutine behind.
func TestNeverReadingClient(t *testing.T) {
	srv, ts := newTestServer(t, Options{WriteTimeout: 30 * time.Second})
	base := settledGoroutines(0)
	const n = 100_000
	id := create(t, ts, fakeRun(n, "ssfw-as"))
	c := dial(t, ts, id)
	run := waitFinished(t, srv, id)
	if got := run.Traces()[0].Len(); got != n+1 {
		t.Fatalf("trace holds %d records, want %d", got, n+1)
	}
	st := status(t, ts, id)
	if st.Status != "done" || st.Traces[0].Records != n+1 || st.Traces[0].Summary.Iters != n {
		t.Fatalf("status %+v", st.Traces[0])
	}
	// The full trace stays available to the slow client.
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/trace?format=csv", nil)
	if lines := bytes.Count(body, []byte("\n")); code != 200 || lines != n+2 {
		t.Fatalf("csv download: %d, %d lines", code, lines)
	}
	if srv.openStreams() != 1 {
		t.Fatal("the stream ended before the client left: the writer was never blocked by the client")
	}
	c.Close()
	waitFor(t, "stream handler to return", func() bool { return srv.openStreams() == 0 })
	if got := settledGoroutines(base); got > base {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%d goroutines after the client left, %d before:\n%s", got, base, buf)
	}
}

// settledGoroutines waits (up to 5 s) until at most target goroutines run
// (target 0: until the count is stable), and returns the count.
func settledGoroutines(target int) int {
	deadline := time.Now().Add(5 * time.Second)
	prev := -1
	for {
		runtime.GC()
		n := runtime.NumGoroutine()
		if (target > 0 && n <= target) || (target == 0 && n == prev) || time.Now().After(deadline) {
			return n
		}
		prev = n
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTooSlowClientIsClosedWith1013(t *testing.T) {
	// The client stalls for as long as the run takes (far beyond the
	// default write timeout of 10 s under the race detector on a busy
	// machine): a write that waits that long is slow, not dead, so the
	// write timeout is set beyond any such wait.
	srv, ts := newTestServer(t, Options{MaxLag: 1000, SlowWrite: 100 * time.Millisecond, MinInterval: 10 * time.Millisecond, WriteTimeout: 10 * time.Minute})
	const n = 300_000
	id := create(t, ts, fakeRun(n, "fw"))
	c := dial(t, ts, id)
	defer c.Close()
	// Stall until the run is over, and a little more: the socket buffers
	// fill up and the server's writes wait for the client while most of the
	// trace is still unsent.
	run := waitFinished(t, srv, id)
	time.Sleep(300 * time.Millisecond)
	var err error
	for err == nil {
		_, _, err = c.ReadMessage()
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 1013 || !strings.Contains(ce.Text, "/api/runs/"+id+"/trace") {
		t.Fatalf("stream ended with %v, want close 1013 naming the trace URL", err)
	}
	if run.Traces()[0].Len() != n+1 {
		t.Errorf("trace incomplete: %d", run.Traces()[0].Len())
	}
}

// A backlog that only the rate limit causes never disconnects a client that
// reads: the batches grow to catch up instead.
func TestRateLimitedBacklogIsCaughtUp(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxBatch: 50, MaxLag: 100, SlowWrite: 10 * time.Second, MinInterval: 10 * time.Millisecond})
	const n = 20_000
	id := create(t, ts, fakeRun(n, "fw", "afw"))
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	col := &collector{t: t}
	biggest := 0
	for m := range ch {
		col.add(m)
		for _, b := range m.Batches {
			biggest = max(biggest, len(b.Records))
		}
	}
	if err := <-errc; !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("stream ended with %v, want a normal close", err)
	}
	if col.done == nil || len(col.got[0]) != n+1 || len(col.got[1]) != n+1 {
		t.Fatalf("done %v, %d and %d records", col.done != nil, len(col.got[0]), len(col.got[1]))
	}
	if biggest <= 25 || biggest > 250 {
		t.Errorf("largest batch %d records; want above the share 25 and at most 10× it", biggest)
	}
}

func TestCloseEndsStreams(t *testing.T) {
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	sp := fakeRun(1_000_000, "fw")
	sp.Params["delay_us"] = "200"
	id := create(t, ts, sp)
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	<-ch // hello
	r, _ := srv.Manager().Get(id)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	if err := <-errc; !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("stream ended with %v, want 1001", err)
	}
	if !r.Finished() || r.Traces()[0].Status() != session.StatusInterrupted || r.RunStatus() != session.StatusInterrupted {
		t.Errorf("run not interrupted by Close: trace %s, run %s", r.Traces()[0].Status(), r.RunStatus())
	}
	if code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, fakeRun(5, "fw"))); code != 503 {
		t.Errorf("create after close: %d %s", code, body)
	}
}

// The real thing: the registered toy polygon with ssfw-as against fista,
// streamed over the websocket and compared with the downloaded trace.
func TestToyPolygonSSFWASvsFISTA(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}},
		Replications: 2, Seed: 7, Iters: 400, EvalEvery: 1}
	id := create(t, ts, sp)
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	col := &collector{t: t}
	for m := range ch {
		if m.Type == "records" {
			// Records are numbered from the solver's first iteration on;
			// check continuity only (the collector assumes the fake's k).
			for _, b := range m.Batches {
				if b.From != len(col.got[b.Trace]) {
					t.Fatalf("trace %d batch from %d after %d records", b.Trace, b.From, len(col.got[b.Trace]))
				}
				col.got[b.Trace] = append(col.got[b.Trace], b.Records...)
			}
			continue
		}
		col.add(m)
	}
	if err := <-errc; !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("stream ended with %v", err)
	}
	if col.done == nil || col.done.Status != "done" || col.done.Info.Dim != 2 || col.done.Info.FStar == nil {
		t.Fatalf("done %+v", col.done)
	}
	fstar := *col.done.Info.FStar
	for i, tr := range col.done.Traces {
		recs := col.got[i]
		if len(recs) != tr.Records || len(recs) == 0 || tr.Summary == nil {
			t.Fatalf("trace %+v: %d streamed", tr, len(recs))
		}
		for j := 1; j < len(recs); j++ {
			if recs[j].K != recs[j-1].K+1 {
				t.Fatalf("trace %d: k jumps %d → %d", i, recs[j-1].K, recs[j].K)
			}
		}
		last := recs[len(recs)-1]
		if last.Objective == nil || *last.Objective-fstar > 1e-3*(1+abs(fstar)) {
			t.Errorf("trace %d (%s): final objective %v, F* = %v", i, tr.Algo, last.Objective, fstar)
		}
		if tr.Algo == "ssfw-as" && last.Gap == nil {
			t.Errorf("trace %d: no gap on the last record", i)
		}
	}
	if col.done.Info.Panels != nil || !col.done.HasPanels {
		t.Errorf("the done status carries panels %v, has_panels %v: want none, and true", col.done.Info.Panels, col.done.HasPanels)
	}
	if _, ok := instancePanels(t, ts, id)["geometry"]; !ok {
		t.Error("the toy polygon's geometry panel is missing")
	}
	// The download holds exactly the streamed records.
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/trace?format=jsonl", nil)
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	want := 0
	for _, g := range col.got {
		want += len(g)
	}
	if code != 200 || len(lines) != want {
		t.Fatalf("jsonl: %d, %d lines, %d streamed", code, len(lines), want)
	}
	for n, ln := range lines {
		var rec traceLine
		if err := json.Unmarshal(ln, &rec); err != nil {
			t.Fatal(err)
		}
		if !sameRecord(rec.Record, col.got[*rec.Trace][n-offset(col.got, *rec.Trace)]) {
			t.Fatalf("line %d differs from the streamed record", n+1)
		}
	}
	_ = srv
}

func offset(got [][]solver.Record, trace int) int {
	o := 0
	for i := 0; i < trace; i++ {
		o += len(got[i])
	}
	return o
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Every registered preset fits the server's limits, so that the start page
// can launch it.
func TestPresetsFitTheLimits(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	code, body := do(t, "GET", ts.URL+"/api/presets", nil)
	var presets []PresetEntry
	if err := json.Unmarshal(body, &presets); code != 200 || err != nil {
		t.Fatalf("%d %s", code, body)
	}
	for _, p := range presets {
		sp := p.Spec
		if err := sp.Normalize(); err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
			continue
		}
		if n := (sp.Iters + 1) * len(sp.Algorithms) * sp.Replications; n > srv.Manager().Options().MaxRecords {
			t.Errorf("preset %s needs %d records, more than the server keeps", p.Name, n)
		}
	}
}

func TestPagesAreMounted(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, c := range []struct {
		path, ctype, has string
	}{
		{"/", "text/html", `id="start-form"`},
		{"/runs/r1", "text/html", "r1"},
	} {
		resp, err := client.Get(ts.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype) || !strings.Contains(string(b), c.has) {
			t.Errorf("%s: %d %s, body lacks %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.has)
		}
	}
	// Unknown pages are plain 404s; unknown API paths JSON 404s.
	if code, _ := do(t, "GET", ts.URL+"/nothing-here", nil); code != 404 {
		t.Errorf("unknown page: %d", code)
	}
}

func TestRunLimitsOverAPI(t *testing.T) {
	srv, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 1, MaxStored: 2}})
	slow := fakeRun(1_000_000, "fw")
	slow.Params["delay_us"] = "100"
	id := create(t, ts, slow)
	// A second run waits in the queue, shown as queued, until the first ends.
	id2 := create(t, ts, fakeRun(5, "fw"))
	if st := status(t, ts, id2); st.Status != session.StatusQueued || st.QueuePosition != 1 {
		t.Errorf("second run: %s at %d, want queued at 1", st.Status, st.QueuePosition)
	}
	if code, _ := do(t, "DELETE", ts.URL+"/api/runs/"+id, nil); code != 202 {
		t.Fatalf("cancel: %d", code)
	}
	waitFinished(t, srv, id)
	waitFinished(t, srv, id2)
	if st := status(t, ts, id2); st.Status != session.StatusDone || st.Records != 6 {
		t.Errorf("queued run ended %s with %d records", st.Status, st.Records)
	}
	waitFinished(t, srv, create(t, ts, fakeRun(5, "fw")))
	// Beyond MaxStored, finished runs are not evicted: they are in the
	// store, out of memory.
	if _, live := srv.Manager().Live(id); live {
		t.Error("a finished run stays in memory")
	}
	if st := status(t, ts, id); st.Status != session.StatusCancelled || st.Ended == nil {
		t.Errorf("first run, from the store: %s, ended %v", st.Status, st.Ended)
	}
}

// FuzzCreateRun: any request body gets a well-formed answer: 201 with an id,
// or a JSON error with a message (400 naming a known kind of field, 413, 429).
func FuzzCreateRun(f *testing.F) {
	for _, s := range []string{
		`{"problem":"test-fake","params":{"n":3},"algorithms":[{"algo":"fw"}],"iters":3}`,
		`{"problem":"test-fake","params":{"n":"x"},"algorithms":[{"algo":"fw"}]}`,
		`{"problem":"test-fake","algorithms":[{"algo":"ssfw-as","schedule":"constant","m0":9999}],"iters":2}`,
		`{"problem":"nope"}`, `[]`, `null`, `{"iters":1e400}`, `{"algorithms":[{"algo":1}]}`, "",
	} {
		f.Add([]byte(s))
	}
	srv, err := New(Options{MaxBody: 2048, Session: session.Options{MaxActive: 2, MaxStored: 2, MaxRecords: 10_000}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "http://localhost/api/runs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusCreated:
			var out struct{ ID string }
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.ID == "" {
				t.Fatalf("201 with body %q", rec.Body.String())
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
			if rec.Body.Len() > MaxErrorBody {
				t.Fatalf("error body of %d bytes", rec.Body.Len())
			}
			var e apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%d with body %q", rec.Code, rec.Body.String())
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}

// Pings keep a busy stream alive: with a pong deadline far shorter than the
// stream, a client that reads (and so answers pings) is never cut off. The
// pong wait is generous (on two busy cores the client saw up to 1.1 s
// between two pings sent every 100 ms), and the rate limit makes the stream
// last at least two pong waits whatever the machine's speed: without pings
// sent while the stream is busy, or without pongs extending the read
// deadline, the server drops the client at the first pong wait.
func TestPingsKeepBusyStreamAlive(t *testing.T) {
	const (
		pongWait  = 3 * time.Second
		pingEvery = 100 * time.Millisecond
		records   = 4000
		maxBatch  = 2 // at most 10× that per message while behind
		waits     = 2 // pong waits the stream lasts at the least
	)
	// At most 20 records per message and one message per minInterval: the
	// stream is behind for the whole of it.
	messages := (records + 1 + 10*maxBatch - 1) / (10 * maxBatch)
	minInterval := waits * pongWait / time.Duration(messages-1)
	_, ts := newTestServer(t, Options{PingInterval: pingEvery, PongWait: pongWait, MinInterval: minInterval,
		MaxBatch: maxBatch, SlowWrite: time.Minute})
	id := create(t, ts, fakeRun(records, "fw"))
	c := dial(t, ts, id)
	defer c.Close()
	// Answer pings as the library does by default, counting them.
	var pings atomic.Int64
	var lastPing time.Time
	var widest time.Duration // between two pings, as the client saw them
	c.SetPingHandler(func(data string) error {
		now := time.Now()
		if pings.Add(1) > 1 {
			widest = max(widest, now.Sub(lastPing))
		}
		lastPing = now
		err := c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	start := time.Now()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	col := &collector{t: t}
	for m := range ch {
		col.add(m)
	}
	took := time.Since(start)
	t.Logf("stream of %v, %d pings, the widest gap between two %v (pong wait %v)", took.Round(time.Millisecond), pings.Load(), widest.Round(time.Millisecond), pongWait)
	if err := <-errc; !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("stream ended after %v (pong wait %v, %d pings seen) with %v, want a normal close", took, pongWait, pings.Load(), err)
	}
	if col.done == nil || len(col.got[0]) != records+1 {
		t.Fatalf("done %+v, %d records", col.done, len(col.got[0]))
	}
	// The check means something only if the stream outlived the pong wait
	// several times over, the pings keeping it open all along.
	if took < waits*pongWait {
		t.Fatalf("the stream took %v, under %d pong waits of %v: the rate limit did not hold it back", took, waits, pongWait)
	}
	if n := pings.Load(); n < waits {
		t.Fatalf("%d pings in a stream of %v (every %v, pong wait %v)", n, took, pingEvery, pongWait)
	}
}

// The CSV download carries a column per problem-specific metric, filled
// from the records that have it (here the teaching trace of a 2-D problem:
// the iterate, the FW and away vertices and the active weights).
func TestTraceCSVExtraColumns(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, spec.Run{Problem: "toy-polygon", Seed: 1, Iters: 30, Algorithms: []spec.Algo{{Algo: "afw"}}})
	run := waitFinished(t, srv, id)
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/trace?format=csv", nil)
	if code != 200 {
		t.Fatalf("csv: %d %s", code, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Split(strings.TrimSuffix(csvHeader, "\n"), ",")
	head := rows[0]
	if !reflect.DeepEqual(head[:len(base)], base) {
		t.Fatalf("header %v", head)
	}
	col := map[string]int{}
	for i, h := range head[len(base):] {
		key, ok := strings.CutPrefix(h, "extra.")
		if !ok {
			t.Fatalf("column %q", h)
		}
		col[key] = len(base) + i
	}
	for _, k := range []string{"x0", "x1", "fw_x0", "away_x1"} {
		if _, ok := col[k]; !ok {
			t.Errorf("no column extra.%s in %v", k, head)
		}
	}
	recs := run.Traces()[0].Records(0, run.Traces()[0].Len())
	if len(rows)-1 != len(recs) {
		t.Fatalf("%d rows for %d records", len(rows)-1, len(recs))
	}
	weights := 0
	for i, rec := range recs {
		for k, c := range col {
			v, ok := rec.Extra[k]
			cell := rows[i+1][c]
			if !ok {
				if cell != "" {
					t.Fatalf("record %d has no %s, cell %q", i, k, cell)
				}
				continue
			}
			if f, err := strconv.ParseFloat(cell, 64); err != nil || f != v {
				t.Fatalf("record %d %s = %v, cell %q", i, k, v, cell)
			}
			if strings.HasPrefix(k, "w:") {
				weights++
			}
		}
	}
	if weights == 0 {
		t.Error("no active-set weight columns filled")
	}
}
