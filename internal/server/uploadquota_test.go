package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// uploadFrom uploads a CSV file from the client address ip (127.0.0.x: a
// client of its own for the per-client budgets).
func uploadFrom(t *testing.T, url, ip string, data []byte) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}}
	req, _ := http.NewRequest("POST", url+"/api/uploads", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("upload answer %d: %s", resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

// csvOf is a CSV file of exactly 1200 bytes, different for each i.
func csvOf(i int) []byte {
	return []byte(strings.Repeat("1,2,3\n", 199) + fmt.Sprintf("%d,2,3\n", i%10))
}

// Each client has its own upload quota beside the total: one client at
// its quota is refused (413 naming -client-upload-quota and what is left)
// while another still uploads; a file's bytes come back when the last run
// naming it is deleted (the file goes), and those of a file no run named
// after the grace, while a file a run names stays.
func TestUploadQuotaPerClient(t *testing.T) {
	const grace = 2 * time.Second
	srv, ts := newTestServer(t, Options{UploadDir: t.TempDir(), UploadQuota: 100000, ClientUploadQuota: 3000, UploadGrace: grace,
		Flags: map[string]string{"UploadQuota": "-upload-quota", "ClientUploadQuota": "-client-upload-quota"}})
	path := func(out map[string]any) string { return out["path"].(string) }
	onDisk := func(p string) bool {
		_, err := os.Stat(filepath.Join(srv.uploads.dir, strings.TrimPrefix(p, "upload:")))
		return err == nil
	}
	var a []string
	for i := range 2 {
		code, out := uploadFrom(t, ts.URL, "127.0.0.1", csvOf(i))
		if code != 201 {
			t.Fatalf("client A's upload %d: %d %v", i, code, out)
		}
		a = append(a, path(out))
	}
	code, out := uploadFrom(t, ts.URL, "127.0.0.1", csvOf(2))
	if msg, _ := out["error"].(string); code != 413 || !strings.Contains(msg, "-client-upload-quota") || !strings.Contains(msg, "600 bytes left") || !strings.Contains(msg, "this client's") {
		t.Fatalf("client A over its quota: %d %v", code, out)
	}
	// another client is not locked out
	if code, out := uploadFrom(t, ts.URL, "127.0.0.2", csvOf(3)); code != 201 {
		t.Fatalf("client B while A is at its quota: %d %v", code, out)
	}
	// a run names A's first file; deleting it gives the bytes back
	sp := fakeRun(5, "fw")
	sp.Params["data"] = a[0]
	id := create(t, ts, sp)
	waitFinished(t, srv, id)
	code2, body := do(t, "POST", ts.URL+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{id}}))
	if code2 != 200 {
		t.Fatalf("delete: %d %s", code2, body)
	}
	if onDisk(a[0]) {
		t.Errorf("the file of the deleted run is still stored")
	}
	code, out = uploadFrom(t, ts.URL, "127.0.0.1", csvOf(4))
	if code != 201 {
		t.Fatalf("client A after deleting the run naming its file: %d %v", code, out)
	}
	a = append(a, path(out))
	// a run names the newest file: it stays past the grace, the unnamed
	// one goes
	sp.Params["data"] = a[2]
	kept := create(t, ts, sp)
	waitFinished(t, srv, kept)
	waitFor(t, "the unnamed file's grace", func() bool {
		code, out := uploadFrom(t, ts.URL, "127.0.0.1", csvOf(5))
		if code == 201 {
			a = append(a, path(out))
		}
		return code == 201
	})
	if onDisk(a[1]) || !onDisk(a[2]) {
		t.Errorf("after the grace: the unnamed file stored %v, the named one %v", onDisk(a[1]), onDisk(a[2]))
	}
}
