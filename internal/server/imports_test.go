package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func postImport(t *testing.T, url string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/api/runs/import", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// Importing the same bundle twice answers the first run (200, existing);
// a bundle that breaks a bound is refused with 400 naming the path.
func TestImportTwiceAndBoundsOverHTTP(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, fakeRun(500, "fw"))
	waitFinished(t, srv, id)
	_, bundle := do(t, "GET", ts.URL+"/api/runs/"+id+"/bundle", nil)

	resp, body := postImport(t, ts.URL, bytes.NewReader(bundle))
	var first struct {
		ID       string
		Existing bool
	}
	if err := json.Unmarshal(body, &first); resp.StatusCode != 201 || err != nil || first.ID == "" || resp.Header.Get("Location") != "/api/runs/"+first.ID {
		t.Fatalf("first import: %d %s", resp.StatusCode, body)
	}
	resp, body = postImport(t, ts.URL, bytes.NewReader(bundle))
	var again struct {
		ID       string
		Existing bool
	}
	if err := json.Unmarshal(body, &again); resp.StatusCode != 200 || err != nil || again.ID != first.ID || !again.Existing {
		t.Errorf("the same bundle again: %d %s; want 200 with run %s", resp.StatusCode, body, first.ID)
	}

	var m map[string]any
	if err := json.Unmarshal(bundle, &m); err != nil {
		t.Fatal(err)
	}
	m["traces"] = append(m["traces"].([]any), m["traces"].([]any)[0])
	dup, _ := json.Marshal(m)
	resp, body = postImport(t, ts.URL, bytes.NewReader(dup))
	var e apiError
	if err := json.Unmarshal(body, &e); resp.StatusCode != 400 || err != nil || e.Field != "traces[1]" || !strings.Contains(e.Error, "duplicates traces[0]") {
		t.Errorf("a duplicate trace: %d %s", resp.StatusCode, body)
	}
	if l := list(t, ts.URL, ""); l.Total != 2 {
		t.Errorf("%d runs listed, want the run and its one import", l.Total)
	}
}

// An import that takes longer than ImportWait is answered 202 with a
// status URL while its body is still coming; the status URL then says how
// it ended. Over MaxImports at once: 429 naming the flag.
func TestSlowImportIsAccepted(t *testing.T) {
	srv, ts := newTestServer(t, Options{ImportWait: 200 * time.Millisecond, MaxImports: 1, Flags: map[string]string{"MaxImports": "-max-imports"}})
	id := create(t, ts, fakeRun(500, "fw"))
	waitFinished(t, srv, id)
	_, bundle := do(t, "GET", ts.URL+"/api/runs/"+id+"/bundle", nil)

	// a client that sends all but the end of the bundle, then waits
	// (Go's client reads no answer before its body is sent: speak HTTP
	// by hand)
	host := strings.TrimPrefix(ts.URL, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/runs/import HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", host, len(bundle))
	if _, err := c.Write(bundle[:len(bundle)-100]); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body is held back: %v", err)
	}
	ab, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
	var acc struct {
		Status    string `json:"status"`
		StatusURL string `json:"status_url"`
	}
	if err := json.Unmarshal(ab, &acc); resp.StatusCode != 202 || err != nil || acc.StatusURL == "" || resp.Header.Get("Location") != acc.StatusURL {
		t.Fatalf("a slow import: %d %s; want 202 with a status URL", resp.StatusCode, ab)
	}
	code, st := do(t, "GET", ts.URL+acc.StatusURL, nil)
	if code != 200 || !strings.Contains(string(st), `"importing"`) {
		t.Errorf("status while importing: %d %s", code, st)
	}
	// a second import meanwhile: over -max-imports
	resp, b := postImport(t, ts.URL, bytes.NewReader(bundle))
	if resp.StatusCode != 429 || !strings.Contains(string(b), "-max-imports") {
		t.Errorf("a second import at once: %d %s; want 429 naming -max-imports", resp.StatusCode, b)
	}
	if _, err := c.Write(bundle[len(bundle)-100:]); err != nil {
		t.Fatal(err)
	}
	var done struct {
		Status string `json:"status"`
		Code   int    `json:"code"`
		ID     string `json:"id"`
	}
	waitFor(t, "the import to end", func() bool {
		_, st := do(t, "GET", ts.URL+acc.StatusURL, nil)
		return json.Unmarshal(st, &done) == nil && done.Status != "importing"
	})
	if done.Status != "done" || done.Code != 201 || done.ID == "" {
		t.Fatalf("the import ended as %+v", done)
	}
	if s := status(t, ts, done.ID); s.Status != "done" || s.Records != 501 {
		t.Errorf("the imported run: %s with %d records", s.Status, s.Records)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/imports/99999", nil); code != 404 {
		t.Errorf("an unknown import: %d", code)
	}
}
