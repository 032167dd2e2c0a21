package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// attackReq is one request an attacker sends.
type attackReq struct {
	method, path, body string
	header             map[string]string
	host               string
}

func send(t *testing.T, ts *httptest.Server, a attackReq) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(a.method, ts.URL+a.path, strings.NewReader(a.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range a.header {
		req.Header.Set(k, v)
	}
	if a.host != "" {
		req.Host = a.host
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func runBody(params map[string]string) string {
	sp := fakeRun(5, "fw")
	for k, v := range params {
		sp.Params[k] = v
	}
	b, _ := json.Marshal(sp)
	return string(b)
}

var jsonHeader = map[string]string{"Content-Type": "application/json"}

func healthy(t *testing.T, ts *httptest.Server) {
	t.Helper()
	if code, _, b := send(t, ts, attackReq{method: "GET", path: "/healthz"}); code != 200 || string(b) != "ok" {
		t.Fatalf("healthz after the attack: %d %q", code, b)
	}
}

// The attacks of a web page (or a local user) on the server: each gets its
// refusal, names the field or budget at fault, never echoes file contents,
// keeps every error body within MaxErrorBody, and leaves the server healthy.
func TestAttacksAreRefused(t *testing.T) {
	data := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.csv")
	if err := os.WriteFile(outside, []byte("TOPSECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(data, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Options{DataDir: data, UploadDir: t.TempDir(), MaxUpload: 32 << 20,
		Flags:   map[string]string{"MaxMemory": "-mem", "MaxClientRuns": "-max-client-runs"},
		Session: session.Options{MaxMemory: 64 << 20, MaxClientRuns: 30}})
	huge := strings.Repeat("\x00", 100_000)
	cases := []struct {
		name  string
		req   attackReq
		code  int
		field string
		has   string // in the body
	}{
		{"/etc/passwd", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": "/etc/passwd"}), header: jsonHeader}, 400, "params.data", "not an absolute path"},
		{"/proc/self/environ", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": "/proc/self/environ"}), header: jsonHeader}, 400, "params.data", "not an absolute path"},
		{"/dev/zero", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": "/dev/zero"}), header: jsonHeader}, 400, "params.data", "not an absolute path"},
		{"escape", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": "../../../etc/passwd"}), header: jsonHeader}, 400, "params.data", "climbs out"},
		{"symlink out", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": "link.csv"}), header: jsonHeader}, 400, "params.data", "symbolic links"},
		{"fifo", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": "fifo"}), header: jsonHeader}, 400, "params.data", "regular file"},
		{"cross-origin text/plain post", attackReq{method: "POST", path: "/api/runs", body: runBody(nil),
			header: map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}}, 403, "", "cross-origin"},
		{"cross-origin pause", attackReq{method: "POST", path: "/api/runs/r1/pause",
			header: map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}}, 403, "", "cross-origin"},
		{"cross-origin upload", attackReq{method: "POST", path: "/api/uploads", body: "x",
			header: map[string]string{"Content-Type": "multipart/form-data; boundary=x", "Origin": "http://evil.example"}}, 403, "", "cross-origin"},
		{"text/plain post", attackReq{method: "POST", path: "/api/runs", body: runBody(nil), header: map[string]string{"Content-Type": "text/plain"}}, 415, "", "application/json"},
		{"form post", attackReq{method: "POST", path: "/api/preview", body: "problem=x", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "", "application/json"},
		{"foreign host", attackReq{method: "GET", path: "/api/runs", host: "evil.example"}, 403, "", "-allow-host"},
		{"foreign host page", attackReq{method: "GET", path: "/", host: "rebind.evil.example:8080"}, 403, "", "-allow-host"},
		{"long field echo", attackReq{method: "POST", path: "/api/runs", body: `{"problem":"` + strings.Repeat("A", 100_000) + `","algorithms":[{"algo":"fw"}]}`, header: jsonHeader}, 400, "problem", "…"},
		{"NUL field echo", attackReq{method: "POST", path: "/api/runs", body: `{"problem":"test-fake","params":{"n":"` + strings.Repeat(`\u0000`, 50_000) + `"},"algorithms":[{"algo":"fw"}]}`, header: jsonHeader}, 400, "params.n", ""},
		{"unknown long field", attackReq{method: "POST", path: "/api/runs", body: `{"` + strings.Repeat("z", 100_000) + `":1}`, header: jsonHeader}, 400, strings.Repeat("z", 64) + "…", "unknown field"},
		{"memory budget", attackReq{method: "POST", path: "/api/runs", body: func() string {
			sp := fakeRun(1_000_000, "fw")
			b, _ := json.Marshal(sp)
			return string(b)
		}(), header: jsonHeader}, 413, "", "-mem"},
		{"NUL path", attackReq{method: "POST", path: "/api/runs", body: runBody(map[string]string{"data": huge}), header: jsonHeader}, 400, "params.data", ""},
		{"sparse index 2^30", attackReq{method: "POST", path: "/api/uploads",
			body:   "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.svm\"\r\n\r\n1 1073741824:1\n-1 1:1\n\r\n--x--\r\n",
			header: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}}, 400, "file", "20000000 entries the dense models"},
		{"cross-origin run link start", attackReq{method: "POST", path: "/api/runs", body: runBody(nil),
			header: map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}}, 403, "", "cross-origin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, hdr, body := send(t, ts, c.req)
			if code != c.code {
				t.Fatalf("%d %.300s, want %d", code, body, c.code)
			}
			if len(body) > MaxErrorBody {
				t.Errorf("error body of %d bytes, over %d", len(body), MaxErrorBody)
			}
			if bytes.Contains(body, []byte("TOPSECRET")) || bytes.Contains(body, []byte("root:")) {
				t.Errorf("the error echoes a file: %s", body)
			}
			var e apiError
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
				t.Fatalf("body %.300s is not an API error: %v", body, err)
			}
			if e.Field != c.field || !strings.Contains(e.Error, c.has) {
				t.Errorf("field %q error %.300q, want field %q and %q", e.Field, e.Error, c.field, c.has)
			}
			if hdr.Get("Content-Security-Policy") == "" || hdr.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("refusal without the security headers: %v", hdr)
			}
			healthy(t, ts)
		})
	}

	// A 20 MB all-NUL upload: a short error, not a 100 MB one.
	t.Run("NUL upload", func(t *testing.T) {
		code, out := upload(t, ts, "file", "zeros.csv", make([]byte, 20<<20), nil)
		b, _ := json.Marshal(out)
		if code != 400 || out["field"] != "file" || len(b) > MaxErrorBody {
			t.Fatalf("%d, %d bytes: %.300s", code, len(b), b)
		}
		healthy(t, ts)
	})
}

// Every page, asset and API answer carries the security headers.
func TestSecurityHeaders(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, p := range []string{"/", "/static/app.js", "/static/app.css", "/api/scenarios", "/healthz", "/no-such-page", "/api/runs/nope"} {
		_, hdr, _ := send(t, ts, attackReq{method: "GET", path: p})
		csp := hdr.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", p, hdr)
		}
	}
	// The pages hold no inline script (JSON data blocks are not scripts)
	// and no inline event handler, which the policy would block.
	_, _, page := send(t, ts, attackReq{method: "GET", path: "/"})
	low := strings.ToLower(string(page))
	for i := 0; ; {
		j := strings.Index(low[i:], "<script")
		if j < 0 {
			break
		}
		tag := low[i+j : i+j+strings.Index(low[i+j:], ">")]
		if !strings.Contains(tag, "src=") && !strings.Contains(tag, `type="application/json"`) {
			t.Errorf("inline script: %.80s", tag)
		}
		i += j + 1
	}
	for _, h := range []string{" onclick=", " onload=", " onchange=", " oninput=", " onsubmit=", "javascript:"} {
		if strings.Contains(low, h) {
			t.Errorf("the page has an inline handler %q", h)
		}
	}
}

// Hosts: the listen address's host and -allow-host names are served, and
// loopback addresses and localhost always; others are not.
func TestHostAllowList(t *testing.T) {
	srv, err := New(Options{ListenAddr: "lab.internal:8080", AllowHosts: []string{"Fwlab.Example"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for host, want := range map[string]bool{
		"localhost:8080": true, "127.0.0.1:9": true, "[::1]:8080": true, "lab.internal:8080": true, "fwlab.example": true,
		"app.localhost": true, "evil.example": false, "10.1.2.3:8080": false, "": false, "lab.internal.evil.example": false,
	} {
		if got := srv.hostAllowed(host); got != want {
			t.Errorf("host %q allowed %v, want %v", host, got, want)
		}
	}
	wild, _ := New(Options{ListenAddr: ":8080"})
	defer wild.Close()
	if !wild.hostAllowed("10.1.2.3:8080") || wild.hostAllowed("evil.example") {
		t.Error("a server on every interface serves IP addresses and no foreign names")
	}
}

// Paused runs hold no run slot: four paused runs leave room for a fifth,
// and a run paused too long is cancelled. The first server's pause timeout
// is far longer than the test, so that the four are still paused (checked)
// when the fifth runs and when one is stepped, however slow the machine;
// the second's is short, and its paused runs are seen cancelled.
func TestPausedRunsDoNotLockOthersOut(t *testing.T) {
	startPaused := func(ts *httptest.Server) []string {
		var paused []string
		for i := 0; i < 4; i++ {
			sp := fakeRun(100, "fw")
			sp.StartPaused = true
			paused = append(paused, create(t, ts, sp))
		}
		return paused
	}
	srv, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 4, PauseTimeout: time.Hour}})
	paused := startPaused(ts)
	id := create(t, ts, fakeRun(50, "fw"))
	waitFinished(t, srv, id)
	if st := status(t, ts, id); st.Status != "done" {
		t.Errorf("fifth run %s", st.Status)
	}
	for _, p := range paused {
		if st := status(t, ts, p); st.Status != "paused" {
			t.Fatalf("%s is %s while the fifth run ran, want paused", p, st.Status)
		}
	}
	// Step one paused run: k = 0 → 1; the records count shows it.
	if code, _ := do(t, "POST", ts.URL+"/api/runs/"+paused[0]+"/step", nil); code != 202 {
		t.Fatalf("step: %d", code)
	}
	waitFor(t, "one step", func() bool { return status(t, ts, paused[0]).Records == 2 })
	if st := status(t, ts, paused[0]); st.Status != "paused" {
		t.Errorf("after a step: %s, want paused", st.Status)
	}

	srv, ts = newTestServer(t, Options{Session: session.Options{MaxActive: 4, PauseTimeout: 300 * time.Millisecond}})
	for _, p := range startPaused(ts) {
		waitFinished(t, srv, p)
		if st := status(t, ts, p); st.Status != "cancelled" || !strings.Contains(st.Message, "pause timeout") {
			t.Errorf("%s: %s %q", p, st.Status, st.Message)
		}
	}
}

// Per-client budgets: runs and websockets.
func TestPerClientBudgets(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxStreamsPerClient: 3,
		Flags:   map[string]string{"MaxClientRuns": "-max-client-runs", "MaxStreamsPerClient": "-max-streams"},
		Session: session.Options{MaxClientRuns: 2}})
	slow := fakeRun(1_000_000, "fw")
	slow.Params["delay_us"] = "1000"
	a := create(t, ts, slow)
	create(t, ts, slow)
	code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, slow))
	if code != 429 || !strings.Contains(string(body), "-max-client-runs") {
		t.Errorf("third run: %d %s", code, body)
	}
	var conns []*websocket.Conn
	for i := 0; i < 3; i++ {
		conns = append(conns, dial(t, ts, a))
	}
	_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/runs/"+a, nil)
	if err == nil || resp == nil || resp.StatusCode != 429 {
		t.Errorf("fourth stream: %v %v", err, resp)
	} else {
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), "-max-streams") {
			t.Errorf("fourth stream: %s", b)
		}
	}
	conns[0].Close()
	waitFor(t, "a stream slot", func() bool {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/runs/"+a, nil)
		if err == nil {
			conns = append(conns, c)
		}
		return err == nil
	})
	for _, c := range conns {
		c.Close()
	}
	healthy(t, ts)
}

// The upload quota bounds what all uploads store together.
func TestUploadQuota(t *testing.T) {
	_, ts := newTestServer(t, Options{UploadDir: t.TempDir(), UploadQuota: 3000, Flags: map[string]string{"UploadQuota": "-upload-quota"}})
	row := func(i int) []byte { return []byte(strings.Repeat("1,2,3\n", 199) + fmt.Sprintf("%d,2,3\n", i)) } // 1200 bytes
	for i := 0; i < 2; i++ {
		if code, out := upload(t, ts, "file", "a.csv", row(i), nil); code != 201 {
			t.Fatalf("upload %d: %d %v", i, code, out)
		}
	}
	code, out := upload(t, ts, "file", "a.csv", row(2), nil)
	if code != 413 || !strings.Contains(fmt.Sprint(out["error"]), "-upload-quota") {
		t.Fatalf("over the quota: %d %v", code, out)
	}
	// A refused upload gives its bytes back: a small one still fits.
	if code, out := upload(t, ts, "file", "b.csv", []byte("1\n"), nil); code != 201 {
		t.Fatalf("small upload after a refusal: %d %v", code, out)
	}
}

// A client trickling a request body is cut off by the read timeout.
func TestTrickledBodyIsCutOff(t *testing.T) {
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ReadTimeout = 300 * time.Millisecond
	ts.Start()
	defer func() { ts.Close(); _ = srv.Close() }()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		close(closed)
	}()
	for {
		select {
		case <-closed:
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("cut off after %v", d)
			}
			return
		case <-time.After(100 * time.Millisecond):
			if time.Since(start) > 5*time.Second {
				t.Fatal("a trickled body kept its connection for 5 s")
			}
			_, _ = conn.Write([]byte(" "))
		}
	}
}

// A hundred never-reading websocket clients on a fast run: the server's
// heap (after GC) stays within a few hundred KiB per client beside the
// records, as every records message is bounded in bytes (without the bound,
// one message could hold 200 000 records, about 27 MB).
func TestNeverReadingClientsBoundMemory(t *testing.T) {
	srv, ts := newTestServer(t, Options{MaxStreamsPerClient: 300, MaxMessage: 256 << 10, WriteTimeout: 60 * time.Second})
	base := heapAfterGC()
	const n = 150_000
	id := create(t, ts, fakeRun(n, "fw", "afw"))
	var conns []*websocket.Conn
	for i := 0; i < 100; i++ {
		conns = append(conns, dial(t, ts, id))
	}
	run, _ := srv.Manager().Get(id)
	select {
	case <-run.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("run %s did not finish", id)
	}
	time.Sleep(300 * time.Millisecond) // writers fill the sockets and block
	grown := int64(heapAfterGC()) - int64(base)
	records := int64(2*(n+1)) * session.RecordBytes
	t.Logf("heap grew by %.1f MiB with 100 idle clients (records: %.1f MiB)", float64(grown)/(1<<20), float64(records)/(1<<20))
	if limit := records + 100*(2*256<<10+64<<10) + 32<<20; grown > limit {
		t.Errorf("heap grew by %d MiB, over %d MiB", grown>>20, limit>>20)
	}
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, "streams to end", func() bool { return srv.openStreams() == 0 })
	healthy(t, ts)
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A small gzip file that inflates far beyond the upload limit is refused
// while it is read, not after it filled the memory.
func TestGzipBombUploadIsRefused(t *testing.T) {
	_, ts := newTestServer(t, Options{UploadDir: t.TempDir(), MaxUpload: 64 << 10})
	var plain bytes.Buffer
	for id := 1; plain.Len() < 2<<20; id++ {
		fmt.Fprintf(&plain, "%d\ta\t-1\t%d\t1\t0", id, id)
		for p := 0; p < 128; p++ {
			plain.WriteString("\t0")
		}
		plain.WriteByte('\n')
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(plain.Bytes())
	_ = zw.Close()
	if gz.Len() > 64<<10 {
		t.Fatalf("the compressed file has %d bytes", gz.Len())
	}
	code, out := upload(t, ts, "file", "letters.tsv.gz", gz.Bytes(), map[string]string{"format": "ocr"})
	if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), "decompressed data exceed 65536 bytes (the upload limit)") {
		t.Fatalf("%d %v", code, out)
	}
	// The same letters within the limit are accepted.
	small := plain.Bytes()[:bytes.IndexByte(plain.Bytes(), '\n')+1]
	gz.Reset()
	zw = gzip.NewWriter(&gz)
	_, _ = zw.Write(small)
	_ = zw.Close()
	if code, out := upload(t, ts, "file", "one.tsv.gz", gz.Bytes(), nil); code != 201 {
		t.Fatalf("one letter: %d %v", code, out)
	}
}

// Each records batch says how many records the server holds for its trace,
// so that a page behind them can show that it is catching up.
func TestBatchesCarryTheStoredCount(t *testing.T) {
	srv, ts := newTestServer(t, Options{MaxBatch: 50, MinInterval: 20 * time.Millisecond})
	id := create(t, ts, fakeRun(3000, "fw"))
	waitFinished(t, srv, id)
	c := dial(t, ts, id)
	defer c.Close()
	behind, got := false, 0
	for got < 3001 {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Type    string
			Batches []struct {
				From, Stored int
				Records      []json.RawMessage
			}
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, bt := range m.Batches {
			end := bt.From + len(bt.Records)
			if bt.Stored != 3001 || end > bt.Stored {
				t.Fatalf("batch from %d with %d records says stored %d", bt.From, len(bt.Records), bt.Stored)
			}
			behind = behind || end < bt.Stored
			got = end
		}
	}
	if !behind {
		t.Error("no batch showed the client behind the server")
	}
}

// The websocket keeps its origin check: a page elsewhere cannot read a
// run's stream.
func TestWebsocketRefusesForeignOrigins(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, fakeRun(10, "fw"))
	waitFinished(t, srv, id)
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws/runs/" + id
	_, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {"http://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", err, resp)
	}
	resp.Body.Close()
	c, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatalf("own origin: %v", err)
	}
	resp.Body.Close()
	c.Close()
	healthy(t, ts)
}

// A long download outlives the server's write timeout as long as it
// progresses: each write gets its own deadline.
func TestLongDownloadOutlivesWriteTimeout(t *testing.T) {
	srv, err := New(Options{WriteTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.WriteTimeout = 300 * time.Millisecond
	ts.Start()
	defer func() { ts.Close(); _ = srv.Close() }()
	const n = 100_000
	id := create(t, ts, fakeRun(n, "fw"))
	waitFinished(t, srv, id)
	req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+id+"/trace", nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	lines, buf := 0, make([]byte, 32<<10)
	for {
		k, err := resp.Body.Read(buf)
		lines += bytes.Count(buf[:k], []byte("\n"))
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d lines and %v: %v", lines, time.Since(start), err)
		}
		time.Sleep(2 * time.Millisecond) // a slow reader
	}
	if lines != n+1 {
		t.Fatalf("%d lines, want %d", lines, n+1)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Logf("the download took only %v: the write timeout was not put to the test", d)
	}
}

// An upload may take longer than the server's read timeout (up to
// UploadTimeout); a run spec may not.
func TestSlowUploadOutlivesReadTimeout(t *testing.T) {
	srv, err := New(Options{UploadDir: t.TempDir(), UploadTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ReadTimeout = 300 * time.Millisecond
	ts.Start()
	defer func() { ts.Close(); _ = srv.Close() }()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, _ := mw.CreateFormFile("file", "slow.csv")
		for i := 0; i < 10; i++ {
			fmt.Fprintf(fw, "%d,1\n", i)
			time.Sleep(80 * time.Millisecond)
		}
		_ = mw.Close()
		_ = pw.Close()
	}()
	req, _ := http.NewRequest("POST", ts.URL+"/api/uploads", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("slow upload: %d %s", resp.StatusCode, b)
	}
}

// At most MaxParses uploads are parsed at once: with every parse slot
// taken, an upload waits, and goes through when one is free.
func TestUploadsWaitForAParseSlot(t *testing.T) {
	srv, ts := newTestServer(t, Options{UploadDir: t.TempDir(), MaxParses: 2})
	srv.parses <- struct{}{}
	srv.parses <- struct{}{}
	done := make(chan int, 1)
	go func() {
		code, _ := upload(t, ts, "file", "a.csv", []byte("1,2\n"), nil)
		done <- code
	}()
	select {
	case code := <-done:
		t.Fatalf("the upload was parsed with every parse slot taken: %d", code)
	case <-time.After(200 * time.Millisecond):
	}
	<-srv.parses
	select {
	case code := <-done:
		if code != 201 {
			t.Fatalf("upload: %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upload did not go through when a parse slot was freed")
	}
	<-srv.parses
}

// damage deletes the record batches of a stored run's trace from record
// from on, as a damaged file or a run trimmed while it is read would leave
// it: the trace still reports all its records.
func damage(t *testing.T, path, id string, trace, from int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`DELETE FROM batches WHERE run_id = ? AND trace = ? AND first_rec >= ?`, id, trace, from)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatalf("no batch of run %s trace %d from record %d", id, trace, from)
	}
}

// A download whose records cannot all be read fails visibly: the trace
// (JSON Lines, plain or gzip) and the bundle abort the connection midway
// instead of ending cleanly, and a CSV (which reads the records before its
// header) answers 500 naming the cause. Before the fix each answered 200 and
// ended cleanly with a part of the records.
func TestCutDownloadsFailVisibly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, ts := newTestServer(t, Options{Session: session.Options{Store: st}})
	// trace 1 spans two batches at the least (MaxBatchRecords each at
	// most): every one but its first is cut below, so that a download
	// has sent trace 0 and a part of trace 1 when it reaches the hole
	const n = 6_000
	id := create(t, ts, fakeRun(n, "fw", "afw"))
	waitFinished(t, srv, id)
	waitFor(t, "the run to leave memory", func() bool { _, live := srv.Manager().Live(id); return !live })
	// Whole before the damage.
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/trace", nil)
	if whole := bytes.Count(body, []byte("\n")); code != 200 || whole != 2*(n+1) {
		t.Fatalf("before the damage: %d, %d lines", code, whole)
	}
	damage(t, path, id, 1, 1)
	for _, c := range []struct{ path, enc string }{
		{"/trace", "identity"}, {"/trace?format=jsonl", "gzip"}, {"/bundle", "identity"}, {"/bundle", "gzip"},
	} {
		t.Run(c.path+" "+c.enc, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+id+c.path, nil)
			req.Header.Set("Accept-Encoding", c.enc)
			resp, err := client.Do(req)
			if err != nil {
				t.Logf("refused before the headers: %v", err)
				return
			}
			defer resp.Body.Close()
			var r io.Reader = resp.Body
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(resp.Body)
				if err != nil {
					t.Logf("the gzip stream is broken at once: %v", err)
					return
				}
				r = zr
			}
			got, err := io.ReadAll(r)
			if err == nil {
				t.Fatalf("%d: a cut download ended cleanly after %d bytes (%d lines)", resp.StatusCode, len(got), bytes.Count(got, []byte("\n")))
			}
			t.Logf("%d bytes, then %v", len(got), err)
		})
	}
	code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/trace?format=csv", nil)
	if code != 500 || !strings.Contains(string(body), "missing") {
		t.Errorf("CSV of a damaged run: %d %.300s", code, body)
	}
	// The stream says so too: close code 1011 naming the cause, never a
	// done over missing records (before: it spun without an end).
	c := dial(t, ts, id)
	defer c.Close()
	got := 0
	for {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, msg, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseInternalServerErr || !strings.Contains(ce.Text, "reading the run's records failed") {
				t.Fatalf("after %d records the stream ended with %v", got, err)
			}
			t.Logf("the stream closed after %d records: %d %s", got, ce.Code, ce.Text)
			break
		}
		var m struct {
			Type    string
			Batches []struct{ Records []json.RawMessage }
		}
		_ = json.Unmarshal(msg, &m)
		if m.Type == "done" {
			t.Fatalf("done after %d of %d records", got, 2*(n+1))
		}
		for _, b := range m.Batches {
			got += len(b.Records)
		}
	}
	healthy(t, ts)
}

// CSV cells a spreadsheet would run as formulas are prefixed with ' (the
// OWASP rule); negative numbers stay numbers.
func TestCSVCellsAreSpreadsheetSafe(t *testing.T) {
	for in, want := range map[string]string{
		"fw": "fw", "": "", "=HYPERLINK(\"http://evil\")": `"'=HYPERLINK(""http://evil"")"`,
		"+1+2": "'+1+2", "-2+3": "'-2+3", "-2.5": "-2.5", "-1e-3": "-1e-3", "@SUM(A1)": "'@SUM(A1)",
		"\tcmd": "'\tcmd", "\rcmd": "\"'\rcmd\"", "a=b": "a=b", "-": "'-",
	} {
		if got := string(appendCSVText(nil, in)); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	// End to end: an imported bundle whose steps are formulas
	// downloads as CSV with every such cell defused.
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, fakeRun(20, "fw"))
	waitFinished(t, srv, id)
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/bundle", nil)
	if code != 200 {
		t.Fatalf("bundle: %d", code)
	}
	hostile := strings.ReplaceAll(string(body), `"step":"fw"`, `"step":"=HYPERLINK(\"http://evil.example\",\"x\")"`)
	if hostile == string(body) {
		t.Fatal("the bundle has no step to rewrite")
	}
	code, body = do(t, "POST", ts.URL+"/api/runs/import", []byte(hostile))
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); code != 201 || err != nil {
		t.Fatalf("import: %d %s", code, body)
	}
	code, body = do(t, "GET", ts.URL+"/api/runs/"+out.ID+"/trace?format=csv", nil)
	if code != 200 {
		t.Fatalf("csv: %d %s", code, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	formulas := 0
	for _, row := range rows {
		for _, cell := range row {
			if formulaLike(cell) {
				t.Errorf("cell %q would run as a formula", cell)
			}
			if strings.HasPrefix(cell, "'=") || strings.HasPrefix(cell, "'@") {
				formulas++
			}
		}
	}
	if formulas == 0 {
		t.Errorf("no defused formula in the download: %.400s", body)
	}
	t.Logf("%d formula cells defused in %d rows", formulas, len(rows))
}

// A sparse file the dense models cannot hold (one feature index 2^30) is
// refused at upload, naming the file field and the limit; before, it was
// stored and every run on it failed later.
func TestSparseUploadBeyondTheDenseLimitIsRefused(t *testing.T) {
	_, ts := newTestServer(t, Options{UploadDir: t.TempDir()})
	code, out := upload(t, ts, "file", "huge.svm", []byte("1 1:0.5 1073741824:1\n-1 2:1\n"), nil)
	msg := fmt.Sprint(out["error"])
	if code != 400 || out["field"] != "file" || !strings.Contains(msg, "1073741824 features") || !strings.Contains(msg, fmt.Sprint(scenarios.MaxDenseEntries)) {
		t.Fatalf("%d %v", code, out)
	}
	// Within the limit: accepted.
	if code, out := upload(t, ts, "file", "ok.svm", []byte("1 1:0.5 300:1\n-1 2:1\n"), nil); code != 201 || out["cols"] != 300.0 {
		t.Fatalf("a small sparse file: %d %v", code, out)
	}
}

// A request abandoned while its run is built creates nothing, and a build
// that outlives the request's budget answers 504 and leaves no run (before,
// both runs appeared once their builds ended).
func TestAbandonedRequestsCreateNoRun(t *testing.T) {
	srv, ts := newTestServer(t, Options{Timeout: 400 * time.Millisecond})
	slow := fakeRun(10, "fw")
	slow.Params["build_ms"] = "1200"
	// The client hangs up 150 ms after posting.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/api/runs", bytes.NewReader(mustJSON(t, slow)))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := client.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("the abandoned request was answered: %d %s", resp.StatusCode, b)
	}
	// The build outlives the 400 ms budget.
	start := time.Now()
	code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, slow))
	took := time.Since(start)
	if code != http.StatusGatewayTimeout {
		t.Fatalf("a build over the budget: %d %s", code, body)
	}
	t.Logf("504 after %v: %s", took.Round(time.Millisecond), bytes.TrimSpace(body))
	// A build within the budget makes its run.
	quick := fakeRun(10, "fw")
	quick.Params["build_ms"] = "50"
	id := create(t, ts, quick)
	waitFinished(t, srv, id)
	time.Sleep(1500 * time.Millisecond) // both slow builds have ended
	if l := list(t, ts.URL, ""); l.Total != 1 || l.Runs[0].ID != id {
		t.Errorf("runs after the abandoned requests: %+v", l.Runs)
	}
	if runs := srv.Manager().List(); len(runs) > 1 {
		t.Errorf("live runs after the abandoned requests: %+v", runs)
	}
}

// clientFrom is an HTTP client whose connections come from the given
// loopback address: the server tells clients apart by address.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

func createAs(t *testing.T, hc *http.Client, ts *httptest.Server, sp spec.Run) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+"/api/runs", bytes.NewReader(mustJSON(t, sp)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID, Error string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 201 {
		return resp.StatusCode, out.Error
	}
	return 201, out.ID
}

// The queue is round-robin across clients: client B's first run starts
// next after client A's running one, not behind A's twenty queued runs
// (before: position 21, after all of them).
func TestQueueIsRoundRobinAcrossClients(t *testing.T) {
	srv, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 1, MaxClientRuns: 30}})
	a, b := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	blocker := fakeRun(100_000, "fw")
	blocker.Params["delay_us"] = "100"
	code, first := createAs(t, a, ts, blocker)
	if code != 201 {
		t.Fatalf("blocker: %d %s", code, first)
	}
	small := fakeRun(300, "fw")
	small.Params["delay_us"] = "1000" // about 0.3 s each
	var aRuns []string
	for i := 0; i < 20; i++ {
		code, id := createAs(t, a, ts, small)
		if code != 201 {
			t.Fatalf("A's run %d: %d %s", i, code, id)
		}
		aRuns = append(aRuns, id)
	}
	code, bRun := createAs(t, b, ts, small)
	if code != 201 {
		t.Fatalf("B's run: %d %s", code, bRun)
	}
	if st := status(t, ts, bRun); st.Status != "queued" || st.QueuePosition != 1 {
		t.Fatalf("B's first run: %s at position %d, want queued at 1", st.Status, st.QueuePosition)
	}
	if st := status(t, ts, aRuns[0]); st.QueuePosition != 2 {
		t.Errorf("A's first queued run at position %d, want 2", st.QueuePosition)
	}
	if st := status(t, ts, aRuns[19]); st.QueuePosition != 21 {
		t.Errorf("A's last run at position %d, want 21", st.QueuePosition)
	}
	start := time.Now()
	if code, _ := do(t, "DELETE", ts.URL+"/api/runs/"+first, nil); code != 202 {
		t.Fatalf("cancel the blocker: %d", code)
	}
	waitFinished(t, srv, bRun)
	t.Logf("B's run ended %v after the slot freed", time.Since(start).Round(time.Millisecond))
	started := 0
	for _, id := range aRuns {
		if st := status(t, ts, id); st.Status != "queued" {
			started++
		}
	}
	if started > 1 {
		t.Errorf("%d of A's queued runs started before B's first ended", started)
	}
}

// A paused run reserves only the records it has made: three runs started
// paused with nearly the whole record budget leave room for others (before,
// every other run got 429). Resuming takes the rest back, or answers 429
// naming the budget and leaves the run paused.
func TestPausedRunsReserveOnlyWhatTheyMade(t *testing.T) {
	srv, ts := newTestServer(t, Options{Flags: map[string]string{"MaxTotalRecords": "-max-records"},
		Session: session.Options{MaxRecords: 9000, MaxTotalRecords: 10_000, MaxClientRuns: 30}})
	var paused []string
	for i := 0; i < 3; i++ {
		sp := fakeRun(3332, "fw")
		sp.StartPaused = true
		paused = append(paused, create(t, ts, sp))
	}
	for _, id := range paused {
		waitFor(t, "the paused run's first record", func() bool { return status(t, ts, id).Records >= 1 })
	}
	// 3 × 3333 records of budget are held back by the pauses; a run of
	// 501 records still fits.
	waitFinished(t, srv, create(t, ts, fakeRun(500, "fw")))
	big := fakeRun(8000, "fw")
	big.Params["delay_us"] = "1000"
	bigID := create(t, ts, big)
	code, body := do(t, "POST", ts.URL+"/api/runs/"+paused[0]+"/resume", nil)
	if code != 429 || !strings.Contains(string(body), "-max-records") || !strings.Contains(string(body), "3332 remaining records") {
		t.Fatalf("resume beside a large run: %d %s", code, body)
	}
	if st := status(t, ts, paused[0]); st.Status != "paused" {
		t.Errorf("a refused resume left the run %s", st.Status)
	}
	// With every record of the budget held (8 001 + 3 made + 1 996), a
	// step, which adds a record, is refused too.
	filler := fakeRun(1995, "fw")
	filler.Params["delay_us"] = "1000"
	fillerID := create(t, ts, filler)
	code, body = do(t, "POST", ts.URL+"/api/runs/"+paused[1]+"/step", nil)
	if code != 429 || !strings.Contains(string(body), "a step adds a record to each of the run's 1 traces") {
		t.Fatalf("a step over the budget: %d %s", code, body)
	}
	do(t, "DELETE", ts.URL+"/api/runs/"+fillerID, nil)
	waitFinished(t, srv, fillerID)
	if code, body := do(t, "POST", ts.URL+"/api/runs/"+paused[1]+"/step", nil); code != 202 {
		t.Fatalf("a step with room: %d %s", code, body)
	}
	do(t, "DELETE", ts.URL+"/api/runs/"+bigID, nil)
	waitFinished(t, srv, bigID)
	if code, body := do(t, "POST", ts.URL+"/api/runs/"+paused[0]+"/resume", nil); code != 202 {
		t.Fatalf("resume with room: %d %s", code, body)
	}
	waitFor(t, "the resumed run to end", func() bool { return status(t, ts, paused[0]).Status == "done" })
}
