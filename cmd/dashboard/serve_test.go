package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fwlab/fwlab/internal/store"
)

// startServe runs serve (or runServe, with signals) on a free port and
// returns the printed URL and the exit code channel.
func startServe(t *testing.T, ctx context.Context, withSignals bool, args ...string) (string, <-chan int) {
	t.Helper()
	if !hasFlag(args, "-db") {
		args = append(args, "-db", ":memory:") // tests keep nothing unless they ask
	}
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		var c int
		if withSignals {
			c = runServe(append([]string{"-addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		} else {
			c = serve(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		}
		pw.Close()
		code <- c
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no output from serve (exit %d)", <-code)
	}
	line := sc.Text()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("serve printed %q, no URL", line)
	}
	url := strings.Fields(line[i:])[0]
	return strings.TrimSuffix(url, "/"), code
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

func TestServeRunsAndShutsDownGracefully(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, code := startServe(t, ctx, false)

	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, b)
	}
	// Every registered scenario is offered.
	resp, err = http.Get(url + "/api/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Problems []struct{ Name string }
	}
	err = json.NewDecoder(resp.Body).Decode(&cat)
	resp.Body.Close()
	if err != nil || len(cat.Problems) == 0 {
		t.Fatalf("catalogue: %v %+v", err, cat)
	}
	names := map[string]bool{}
	for _, p := range cat.Problems {
		names[p.Name] = true
	}
	if !names["toy-polygon"] {
		t.Errorf("toy-polygon missing from %v", names)
	}

	// A long run with a websocket client: shutting down cancels the run and
	// closes the stream with 1001.
	body := `{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as"},{"algo":"fista"}],"iters":1000000,"eval_every":1000}`
	resp, err = http.Post(url+"/api/runs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != 201 || err != nil {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+"/ws/runs/"+created.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, msg, err := ws.ReadMessage(); err != nil || !strings.Contains(string(msg), `"type":"hello"`) {
		t.Fatalf("hello: %v %.100s", err, msg)
	}
	cancel()
	var closeErr error
	for closeErr == nil {
		_, _, closeErr = ws.ReadMessage()
	}
	if !websocket.IsCloseError(closeErr, websocket.CloseGoingAway) {
		t.Errorf("stream ended with %v, want 1001", closeErr)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d", c)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return after cancellation")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

func TestServeStopsOnSIGTERM(t *testing.T) {
	url, code := startServe(t, nil, true)
	if resp, err := http.Get(url + "/healthz"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d", c)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

func TestServeUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-nope"}, 2, "-nope"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"-data", "/no/such/dir"}, 2, "-data"},
		{[]string{"-addr", "256.1.1.1:99999"}, 1, "-addr"},
		{[]string{"-keep", "-1"}, 2, "-keep"},
		{[]string{"-max-imports", "0"}, 2, "-max-imports"},
		{[]string{"-outside-idle", "500ms"}, 2, "-outside-idle: must be at least 1s"},
		{[]string{"-outside-idle", "-1m"}, 2, "-outside-idle: must be at least 1s"},
		{[]string{"-db", ""}, 2, "-db"},
		{[]string{"-db", "/dev/null/x.db"}, 1, "-db"},
	}
	for _, c := range cases {
		var stderr strings.Builder
		args := c.args
		if !hasFlag(args, "-db") {
			args = append(args, "-db", ":memory:")
		}
		got := serve(context.Background(), args, io.Discard, &stderr)
		if got != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, got, c.code, stderr.String(), c.msg)
		}
	}
}

func TestDashboardURL(t *testing.T) {
	cases := []struct{ addr, bound, want string }{
		{"localhost:8080", "127.0.0.1:8080", "http://localhost:8080/"},
		{":0", "[::]:43123", "http://localhost:43123/"},
		{"127.0.0.1:0", "127.0.0.1:5000", "http://127.0.0.1:5000/"},
		{"[::1]:0", "[::1]:5000", "http://[::1]:5000/"},
	}
	for _, c := range cases {
		if got := dashboardURL(c.addr, fakeAddr(c.bound)); got != c.want {
			t.Errorf("%s bound %s: %s, want %s", c.addr, c.bound, got, c.want)
		}
	}
}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

// SIGTERM with a live run, queued runs, a paused run and websockets that
// never read: serve returns within five seconds, every socket, read after
// the signal, ends with close code 1001, and no run is left live in the
// store (the ones that were live are interrupted).
func TestSIGTERMWithLiveRunsAndIdleSockets(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fwlab.db")
	url, code := startServe(t, nil, true, "-max-active", "1", "-db", db)
	post := func(body string) string {
		t.Helper()
		resp, err := http.Post(url+"/api/runs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var created struct{ ID, Error string }
		if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != 201 {
			t.Fatalf("create: %d %v %s", resp.StatusCode, err, created.Error)
		}
		return created.ID
	}
	long := `{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as"},{"algo":"fista"}],"iters":1000000,"eval_every":1000}`
	live := post(long)
	queued := []string{post(long), post(long)}
	post(`{"problem":"toy-polygon","algorithms":[{"algo":"afw"}],"iters":100,"start_paused":true}`)
	resp, err := http.Get(url + "/api/runs/" + queued[1])
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Status string }
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Status != "queued" {
		t.Fatalf("third run %s, want queued", st.Status)
	}
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/ws/runs/"
	var socks []*websocket.Conn
	for i := 0; i < 6; i++ {
		id := live
		if i%3 == 2 {
			id = queued[0]
		}
		ws, _, err := websocket.DefaultDialer.Dial(wsURL+id, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		socks = append(socks, ws)
	}
	time.Sleep(500 * time.Millisecond) // the sockets' buffers fill while nobody reads
	start := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	closes := make(chan error, len(socks))
	for _, ws := range socks {
		go func(ws *websocket.Conn) {
			_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			var err error
			for err == nil {
				_, _, err = ws.ReadMessage()
			}
			closes <- err
		}(ws)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("serve took %v to stop, want at most 5s", d)
	}
	for range socks {
		if err := <-closes; !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("a stream ended with %v, want 1001", err)
		}
	}
	kept, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if n := kept.Recovered(); n != 0 {
		t.Errorf("%d runs were still live in the store after SIGTERM", n)
	}
	runs, total, err := kept.List(context.Background(), store.Filter{Limit: 100})
	if err != nil || total != 4 {
		t.Fatalf("store holds %d runs (%v), want 4", total, err)
	}
	for _, r := range runs {
		if r.Status != "interrupted" {
			t.Errorf("run %s is %q in the store after SIGTERM, want interrupted", r.ID, r.Status)
		}
	}
}
