package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// liveOpened is the answer of POST /api/live/runs.
type liveOpened struct {
	ID     string   `json:"id"`
	Token  string   `json:"token"`
	Page   string   `json:"page"`
	Traces []string `json:"traces"`
	Iters  int      `json:"iters"`
}

func openLive(t testing.TB, ts *httptest.Server, body string) liveOpened {
	t.Helper()
	code, b := do(t, "POST", ts.URL+"/api/live/runs", []byte(body))
	var out liveOpened
	if err := json.Unmarshal(b, &out); code != http.StatusCreated || err != nil || out.ID == "" || len(out.Token) < 40 {
		t.Fatalf("POST /api/live/runs: %d %s", code, b)
	}
	return out
}

// liveSend posts body to the run's path (records or end) with the token
// ("" sends no Authorization header).
func liveSend(t testing.TB, ts *httptest.Server, id, what, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+"/api/live/runs/"+id+"/"+what, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// liveRec is one record of a least-squares iterate as a client sends it.
func liveRec(trace string, k int, obj float64) string {
	return fmt.Sprintf(`{"trace":%q,"k":%d,"passes":%d,"time_s":%g,"step":"fw","gamma":%g,"batch":0,"active":%d,"objective":%g,"gap":%g,"extra":{"residual":%g}}`,
		trace, k, k, float64(k)*1e-3, 2/float64(k+2), k+1, obj, obj/2, obj*3)
}

func batch(recs ...string) string { return `{"records":[` + strings.Join(recs, ",") + `]}` }

// A run opened from outside is a run like any other: its records, sent in
// batches over two traces, are its trace's; it ends with the client's
// status; its bundle is exported and imported as any run's, marked as
// opened from outside; History lists it with the mark; the page's pause is
// refused; it cannot be written once ended.
func TestLiveRunLifecycle(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	lo := openLive(t, ts, `{"problem":"my least squares","traces":["pgd","fw"],"fstar":0.5,"iters":100}`)
	if lo.Page != "/runs/"+lo.ID || len(lo.Traces) != 2 || lo.Iters != 100 {
		t.Fatalf("opened %+v", lo)
	}
	st := status(t, ts, lo.ID)
	if st.Status != "running" || !st.Spec.Outside || st.Info.FStar == nil || *st.Info.FStar != 0.5 || st.Name != "my least squares: pgd, fw" {
		t.Fatalf("status after open: %+v", st)
	}
	if code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("pgd", 0, 8), liveRec("fw", 0, 8), liveRec("pgd", 1, 4))); code != 200 || !strings.Contains(string(body), `"appended":3`) {
		t.Fatalf("first batch: %d %s", code, body)
	}
	if code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("pgd", 5, 2), liveRec("fw", 3, 3))); code != 200 {
		t.Fatalf("second batch: %d %s", code, body)
	}
	if st := status(t, ts, lo.ID); st.Records != 5 || st.Traces[0].Records != 3 || st.Traces[1].Records != 2 {
		t.Fatalf("records after two batches: %+v", st)
	}
	// the page's pause and step do not apply
	if code, body := do(t, "POST", ts.URL+"/api/runs/"+lo.ID+"/pause", nil); code != http.StatusConflict {
		t.Errorf("pause: %d %s", code, body)
	}
	if code, body := liveSend(t, ts, lo.ID, "end", lo.Token, `{"status":"converged","message":"gap below 1e-6"}`); code != 200 || !strings.Contains(string(body), `"status":"done"`) {
		t.Fatalf("end: %d %s", code, body)
	}
	st = status(t, ts, lo.ID)
	if st.Status != "done" || st.Ended == nil || st.Traces[0].Summary == nil || st.Traces[0].Summary.Status != "converged" ||
		st.Traces[0].Summary.Iters != 5 || st.Traces[0].Summary.Objective != 2 || st.Traces[1].Summary.Message != "gap below 1e-6" {
		t.Fatalf("status after end: %+v", st)
	}
	// the records as sent, read back from the store
	code, body := do(t, "GET", ts.URL+"/api/runs/"+lo.ID+"/trace", nil)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if code != 200 || len(lines) != 5 || !strings.Contains(lines[2], `"algo":"pgd"`) || !strings.Contains(lines[2], `"k":5`) ||
		!strings.Contains(lines[2], `"extra":{"residual":6}`) {
		t.Fatalf("trace: %d %s", code, body)
	}
	if code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("pgd", 6, 1))); code != http.StatusConflict || !strings.Contains(string(body), "ended") {
		t.Errorf("append after the end: %d %s", code, body)
	}
	// its figure is drawn as any run's
	if code, body := do(t, "GET", ts.URL+"/api/runs/"+lo.ID+"/figure.svg", nil); code != 200 || !bytes.Contains(body, []byte("<svg")) {
		t.Errorf("figure: %d %.300s", code, body)
	}
	// it cannot be re-run
	if code, body := do(t, "POST", ts.URL+"/api/runs/"+lo.ID+"/verify", nil); code != http.StatusConflict || !strings.Contains(string(body), "opened from outside") {
		t.Errorf("verify: %d %s", code, body)
	}
	// History marks it
	found := false
	for _, row := range list(t, ts.URL, "").Runs {
		if row.ID == lo.ID {
			found = row.Outside && row.Problem == "my least squares"
		}
	}
	if !found {
		t.Errorf("History does not list the run as opened from outside")
	}
	// its bundle imports back, as a run opened from outside
	code, exported := do(t, "GET", ts.URL+"/api/runs/"+lo.ID+"/bundle", nil)
	if code != 200 {
		t.Fatalf("bundle: %d %s", code, exported)
	}
	b, err := bundle.Decode(bytes.NewReader(exported))
	if err != nil || !b.Spec.Outside || bundle.CheckDigest(b) != nil {
		t.Fatalf("the exported bundle: %v %+v", err, b)
	}
	code, body = do(t, "POST", ts.URL+"/api/runs/import", exported)
	var imp struct{ ID string }
	if err := json.Unmarshal(body, &imp); code != 201 || err != nil {
		t.Fatalf("import: %d %s", code, body)
	}
	sr, err := srv.st.Get(t.Context(), imp.ID)
	if err != nil || !sr.Outside || sr.Status != "done" {
		t.Fatalf("the imported run: %v %+v", err, sr)
	}
	_, want := do(t, "GET", ts.URL+"/api/runs/"+lo.ID+"/trace", nil)
	_, got := do(t, "GET", ts.URL+"/api/runs/"+imp.ID+"/trace", nil)
	if !bytes.Equal(got, want) {
		t.Errorf("the imported trace differs:\n%s\nwant\n%s", got, want)
	}
}

// Hostile logging: every malformed, out-of-order, non-finite, oversized,
// unauthorised or late write is refused with the status and the field it
// breaks, and nothing of a refused batch is kept (the run holds exactly the
// records of the accepted batches, and its pages read them).
func TestLiveHostileWrites(t *testing.T) {
	srv, ts := newTestServer(t, Options{MaxBody: 64 << 10})
	lo := openLive(t, ts, `{"problem":"hostile","traces":["a","b"],"iters":50}`)
	other := openLive(t, ts, `{"problem":"other","traces":["a"]}`)
	catalogue := create(t, ts, fakeRun(5, "fw"))
	waitFinished(t, srv, catalogue)
	if code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("a", 3, 1), liveRec("b", 0, 1))); code != 200 {
		t.Fatalf("the good batch: %d %s", code, body)
	}
	big := make([]string, MaxLiveBatch+1)
	for i := range big {
		big[i] = fmt.Sprintf(`{"trace":"a","k":%d,"passes":0,"time_s":0,"step":"s","gamma":0,"batch":0,"active":0}`, i)
	}
	// the token with its first character changed (to another one: a
	// token may start with x)
	wrong := "x" + lo.Token[1:]
	if lo.Token[0] == 'x' {
		wrong = "y" + lo.Token[1:]
	}
	huge := batch(liveRec("a", 10, 1), `{"trace":"a","k":11,"passes":0,"time_s":0,"step":"`+strings.Repeat("x", 70<<10)+`","gamma":0,"batch":0,"active":1}`)
	for _, c := range []struct {
		name, id, what, token, body string
		code                        int
		field                       string
	}{
		{"no token", lo.ID, "records", "", batch(liveRec("a", 4, 1)), 401, "Authorization"},
		{"wrong token", lo.ID, "records", wrong, batch(liveRec("a", 4, 1)), 403, "Authorization"},
		{"another run's token", lo.ID, "records", other.Token, batch(liveRec("a", 4, 1)), 403, "Authorization"},
		{"the token of a prefix", lo.ID, "records", lo.Token[:len(lo.Token)-1], batch(liveRec("a", 4, 1)), 403, "Authorization"},
		{"no token on end", lo.ID, "end", "", `{"status":"converged"}`, 401, "Authorization"},
		{"unknown run", "aaaaaaaaaaaa", "records", lo.Token, batch(liveRec("a", 4, 1)), 404, "id"},
		{"a catalogue run", catalogue, "records", lo.Token, batch(liveRec("a", 4, 1)), 409, "id"},
		{"k not increasing", lo.ID, "records", lo.Token, batch(liveRec("a", 3, 1)), 400, "records[0].k"},
		{"k decreasing within the batch", lo.ID, "records", lo.Token, batch(liveRec("a", 7, 1), liveRec("b", 2, 1), liveRec("a", 6, 1)), 400, "records[2].k"},
		{"k beyond iters", lo.ID, "records", lo.Token, batch(liveRec("a", 51, 1)), 400, "records[0].k"},
		{"k negative", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"k":4`, `"k":-4`, 1)), 400, "records[0].k"},
		{"NaN objective", lo.ID, "records", lo.Token, batch(liveRec("a", 4, 1), strings.Replace(liveRec("a", 5, 1), `"objective":1`, `"objective":"NaN"`, 1)), 400, "records[1].objective"},
		{"Inf gap", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"gap":0.5`, `"gap":"Inf"`, 1)), 400, "records[0].gap"},
		{"-Inf gamma", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), fmt.Sprintf(`"gamma":%g`, 2.0/6), `"gamma":"-Inf"`, 1)), 400, "records[0].gamma"},
		{"NaN extra", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"residual":3`, `"residual":"NaN"`, 1)), 400, "records[0].extra.residual"},
		{"a number too large", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"objective":1`, `"objective":1e999`, 1)), 400, "records[0].objective"},
		{"negative passes", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"passes":4`, `"passes":-1`, 1)), 400, "records[0].passes"},
		{"unknown trace", lo.ID, "records", lo.Token, batch(liveRec("c", 4, 1)), 400, "records[0].trace"},
		{"a trace's index for its name", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"trace":"a"`, `"trace":0`, 1)), 400, "records[0].trace"},
		{"no trace", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"trace":"a",`, ``, 1)), 400, "records[0].trace"},
		{"a required field missing", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"step":"fw",`, ``, 1)), 400, "records[0].step"},
		{"an unknown record field", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"k":4`, `"k":4,"kk":1`, 1)), 400, "records[0].kk"},
		{"k as a string", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"k":4`, `"k":"4"`, 1)), 400, "records[0].k"},
		{"k fractional", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"k":4`, `"k":4.5`, 1)), 400, "records[0].k"},
		{"a record that is not an object", lo.ID, "records", lo.Token, batch(liveRec("a", 4, 1), `[1,2]`), 400, "records[1]"},
		{"a null record", lo.ID, "records", lo.Token, batch(`null`), 400, "records[0]"},
		{"records not an array", lo.ID, "records", lo.Token, `{"records":{"a":[]}}`, 400, "records"},
		{"records null", lo.ID, "records", lo.Token, `{"records":null}`, 400, "records"},
		{"records twice", lo.ID, "records", lo.Token, `{"records":[],"records":[]}`, 400, "records"},
		{"a body that is an array", lo.ID, "records", lo.Token, `[` + liveRec("a", 4, 1) + `]`, 400, ""},
		{"no records", lo.ID, "records", lo.Token, `{}`, 400, "records"},
		{"an unknown top field", lo.ID, "records", lo.Token, `{"records":[],"trace":"a"}`, 400, "trace"},
		{"JSON junk", lo.ID, "records", lo.Token, `{"records":[{"trace":"a","k":4,`, 400, ""},
		{"two documents", lo.ID, "records", lo.Token, batch(liveRec("a", 4, 1)) + `{}`, 400, ""},
		{"not JSON at all", lo.ID, "records", lo.Token, `k=4&trace=a`, 400, ""},
		{"a body over MaxBody", lo.ID, "records", lo.Token, huge, 413, ""},
		{"too many extra metrics", lo.ID, "records", lo.Token, batch(strings.Replace(liveRec("a", 4, 1), `"extra":{"residual":3}`, `"extra":{`+extras(65)+`}`, 1)), 400, "records[0].extra.m8"}, // "residual" and m0…m64 in sorted order: m8 is the 65th
		{"an unknown end status", lo.ID, "end", lo.Token, `{"status":"finished"}`, 400, "status"},
		{"an end without status", lo.ID, "end", lo.Token, `{}`, 400, "status"},
		{"an end with junk", lo.ID, "end", lo.Token, `{"status":"done","extra":1}`, 400, "extra"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := liveSend(t, ts, c.id, c.what, c.token, c.body)
			var e apiError
			if err := json.Unmarshal(body, &e); code != c.code || err != nil || e.Error == "" || (c.field != "" && e.Field != c.field) {
				t.Errorf("got %d %.300s, want %d naming %q", code, body, c.code, c.field)
			}
		})
	}
	// look-alike credentials: only the run's token, sent once as a Bearer
	// token (the scheme in any case), writes
	for _, c := range []struct {
		name   string
		header []string
		code   int
	}{
		{"the scheme alone", []string{"Bearer "}, 401},
		{"no space", []string{"Bearer" + lo.Token}, 401},
		{"another scheme", []string{"Basic " + lo.Token}, 401},
		{"the token alone", []string{lo.Token}, 401},
		{"a space before the token", []string{"Bearer  " + lo.Token}, 403},
		{"a space after the token (not part of a header's value in HTTP)", []string{"Bearer " + lo.Token + " "}, 200},
		{"the token in upper case", []string{"Bearer " + strings.ToUpper(lo.Token)}, 403},
		{"the token twice", []string{"Bearer " + lo.Token, "Bearer " + lo.Token}, 400},
		{"the scheme in lower case", []string{"bearer " + lo.Token}, 200},
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/api/live/runs/"+lo.ID+"/records", strings.NewReader(`{"records":[]}`))
		req.Header.Set("Content-Type", "application/json")
		for _, h := range c.header {
			req.Header.Add("Authorization", h)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.code || (c.code != 200 && e.Field != "Authorization") {
			t.Errorf("%s: %d %+v, want %d naming Authorization", c.name, resp.StatusCode, e, c.code)
		}
	}
	// every other method on the logging routes is refused as on any route
	for _, path := range []string{"/api/live/runs", "/api/live/runs/" + lo.ID + "/records", "/api/live/runs/" + lo.ID + "/end"} {
		for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
			code, body := do(t, m, ts.URL+path, []byte(batch(liveRec("a", 4, 1))))
			if code != http.StatusMethodNotAllowed || !strings.Contains(string(body), "not allowed") {
				t.Errorf("%s %s: %d %s", m, path, code, body)
			}
		}
	}
	// a batch of more than MaxLiveBatch records (within MaxBody) is
	// refused naming the field
	_, ts1 := newTestServer(t, Options{})
	lo1 := openLive(t, ts1, `{"problem":"big","traces":["a"]}`)
	code, body := liveSend(t, ts1, lo1.ID, "records", lo1.Token, `{"records":[`+strings.Join(big, ",")+`]}`)
	wantError(t, code, body, 413, "records")
	if st := status(t, ts1, lo1.ID); st.Records != 0 {
		t.Errorf("records kept of a batch too large: %d", st.Records)
	}
	// nothing of the refused batches was kept: the two good records only
	st := status(t, ts, lo.ID)
	if st.Status != "running" || st.Records != 2 || st.Traces[0].Records != 1 || st.Traces[1].Records != 1 {
		t.Fatalf("after the refused writes: %+v", st)
	}
	// the cross-origin rule holds for the logging routes as for every request
	code, _, b := send(t, ts, attackReq{method: "POST", path: "/api/live/runs/" + lo.ID + "/records", body: batch(liveRec("a", 4, 1)),
		header: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + lo.Token, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}})
	if code != 403 || !strings.Contains(string(b), "cross-origin") {
		t.Errorf("cross-origin append: %d %s", code, b)
	}
	code, _, b = send(t, ts, attackReq{method: "POST", path: "/api/live/runs/" + lo.ID + "/records", body: batch(liveRec("a", 4, 1)), host: "evil.example",
		header: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + lo.Token}})
	if code != 403 || !strings.Contains(string(b), "host") {
		t.Errorf("a foreign Host: %d %s", code, b)
	}
	code, _, b = send(t, ts, attackReq{method: "POST", path: "/api/live/runs/" + lo.ID + "/records", body: batch(liveRec("a", 4, 1)),
		header: map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer " + lo.Token}})
	if code != 415 {
		t.Errorf("a text body: %d %s", code, b)
	}
	// the open request's own rules
	for _, c := range []struct {
		name, body string
		code       int
		field      string
	}{
		{"no traces", `{"problem":"p"}`, 400, "traces"},
		{"empty traces", `{"problem":"p","traces":[]}`, 400, "traces"},
		{"no problem", `{"traces":["a"]}`, 400, "problem"},
		{"a duplicate trace", `{"problem":"p","traces":["a","a"]}`, 400, "traces[1]"},
		{"a variant separator", `{"problem":"p","traces":["a + b"]}`, 400, "traces[0]"},
		{"a control character", `{"problem":"p","traces":["a\nb"]}`, 400, "traces[0]"},
		{"a long name", `{"problem":"p","traces":["` + strings.Repeat("n", 65) + `"]}`, 400, "traces[0]"},
		{"nine traces", `{"problem":"p","traces":["1","2","3","4","5","6","7","8","9"]}`, 400, "traces"},
		{"negative iters", `{"problem":"p","traces":["a"],"iters":-1}`, 400, "iters"},
		{"iters too many", `{"problem":"p","traces":["a"],"iters":10000001}`, 400, "iters"},
		{"fstar a string", `{"problem":"p","traces":["a"],"fstar":"NaN"}`, 400, "fstar"},
		{"an unknown field", `{"problem":"p","traces":["a"],"seed":1}`, 400, "seed"},
		{"a NUL in the name", `{"problem":"p","traces":["a"],"name":"x\u0000y"}`, 400, "name"},
	} {
		code, body := do(t, "POST", ts.URL+"/api/live/runs", []byte(c.body))
		var e apiError
		if err := json.Unmarshal(body, &e); code != c.code || err != nil || e.Field != c.field || e.Error == "" {
			t.Errorf("open, %s: got %d %s, want %d naming %q", c.name, code, body, c.code, c.field)
		}
	}
	// ended, it takes nothing more, and a second end is refused
	if code, body := liveSend(t, ts, lo.ID, "end", lo.Token, `{"status":"max_iters"}`); code != 200 {
		t.Fatalf("end: %d %s", code, body)
	}
	for _, what := range []string{"records", "end"} {
		body := batch(liveRec("a", 9, 1))
		if what == "end" {
			body = `{"status":"converged"}`
		}
		code, b := liveSend(t, ts, lo.ID, what, lo.Token, body)
		wantError(t, code, b, 409, "id")
	}
}

// extras returns n extra metrics m0…m(n-1) as JSON members.
func extras(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf(`"m%d":%d`, i, i))
	}
	return strings.Join(parts, ",")
}

// A run whose client stops without ending it is ended failed once no batch
// came for the idle timeout, its message saying so, and it keeps the
// records it took; the page's Cancel ends another one cancelled; a closing
// server ends a third interrupted. None of them takes records afterwards.
func TestLiveRunLeftOpen(t *testing.T) {
	const idle = 300 * time.Millisecond
	_, ts := newTestServer(t, Options{Session: session.Options{OutsideIdle: idle}})
	lo := openLive(t, ts, `{"problem":"abandoned","traces":["a"]}`)
	start := time.Now()
	if code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("a", 0, 4), liveRec("a", 1, 2))); code != 200 {
		t.Fatalf("batch: %d %s", code, body)
	}
	// a batch within the timeout keeps it open
	time.Sleep(idle / 2)
	// The server's idle clock starts when the batch arrives, so no sooner
	// than it was sent (its answer can come back much later on a busy
	// machine).
	lastBatch := time.Now()
	if code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("a", 2, 1))); code != 200 {
		t.Fatalf("batch within the timeout: %d %s", code, body)
	}
	waitFor(t, "the idle timeout", func() bool { return status(t, ts, lo.ID).Status == "failed" })
	if since := time.Since(lastBatch); since < idle || time.Since(start) < idle*3/2 {
		t.Errorf("ended %v after the last batch, before the idle timeout of %v", since, idle)
	}
	st := status(t, ts, lo.ID)
	if st.Records != 3 || !strings.Contains(st.Message, "idle timeout") || st.Traces[0].Summary == nil || st.Traces[0].Summary.Status != "failed" || st.Traces[0].Summary.Iters != 2 {
		t.Errorf("after the idle timeout: %+v", st)
	}
	code, body := liveSend(t, ts, lo.ID, "records", lo.Token, batch(liveRec("a", 3, 1)))
	wantError(t, code, body, 409, "id")

	cancelled := openLive(t, ts, `{"problem":"cancelled","traces":["a"]}`)
	if code, body := do(t, "DELETE", ts.URL+"/api/runs/"+cancelled.ID, nil); code != 202 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	waitFor(t, "the cancel", func() bool { return status(t, ts, cancelled.ID).Status == "cancelled" })
	code, body = liveSend(t, ts, cancelled.ID, "records", cancelled.Token, batch(liveRec("a", 0, 1)))
	wantError(t, code, body, 409, "id")

	st2, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	srv2, ts2 := newTestServer(t, Options{Session: session.Options{Store: st2}})
	open := openLive(t, ts2, `{"problem":"interrupted","traces":["a"]}`)
	if code, body := liveSend(t, ts2, open.ID, "records", open.Token, batch(liveRec("a", 0, 1))); code != 200 {
		t.Fatalf("batch: %d %s", code, body)
	}
	if err := srv2.Close(); err != nil {
		t.Fatal(err)
	}
	sr, err := st2.Get(t.Context(), open.ID)
	if err != nil || sr.Status != "interrupted" || !sr.Outside || sr.Traces[0].Records != 1 {
		t.Errorf("after the server closed: %v %+v", err, sr)
	}
}

// The outside mark is the server's to set: a run of the catalogue that
// claims it is refused, naming the field, and nothing is made.
func TestCatalogueRunCannotClaimOutside(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	sp := fakeRun(5, "fw")
	sp.Params, sp.Seed, sp.Outside = nil, 0, true // what an outside spec may hold, on a catalogue problem
	code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, sp))
	wantError(t, code, body, 400, "outside")
	if n := list(t, ts.URL, "").Total; n != 0 {
		t.Errorf("%d runs made", n)
	}
}
