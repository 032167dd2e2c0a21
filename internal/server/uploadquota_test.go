package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
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

// quotaStore is the run store of an upload quota test: SQLite (the
// server runs its runs and counts the quotas in memory) or PostgreSQL (the
// runs are queued for workers, as `dashboard serve` queues them, and the
// store counts the quotas).
type quotaStore struct {
	name string
	// options returns the options of a server on a store of the test's
	// (on PostgreSQL each call a server on the same database).
	options func(t *testing.T) func(Options) Options
}

var quotaStores = []quotaStore{
	{"sqlite", func(t *testing.T) func(Options) Options {
		st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return func(o Options) Options { o.Session.Store = st; return o }
	}},
	{"postgres", func(t *testing.T) func(Options) Options {
		url := pgtest.Start(t).NewDB(t)
		return func(o Options) Options {
			ctx := context.Background()
			st, err := pgstore.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			q, err := queue.New(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			o.Session.Store = st
			o.Submit = func(ctx context.Context, sp spec.Run, client string, max int, files DataFiles) (string, error) {
				return q.SubmitFor(ctx, sp, queue.From{Client: client, Files: queue.Files(files), MaxRuns: max})
			}
			return o
		}
	}},
}

// the PostgreSQL store keeps a server's uploads itself
var _ sharedUploads = (*pgstore.Store)(nil)

// Each client has its own upload quota beside the total, on either store:
// one client at its quota is refused (413 naming -client-upload-quota and
// what is left) while another still uploads; a file's bytes come back when
// the last run naming it is deleted (the file goes), and those of a file no
// run named after the grace, while a file a run names stays.
func TestUploadQuotaPerClient(t *testing.T) {
	for _, qs := range quotaStores {
		t.Run(qs.name, func(t *testing.T) {
			if qs.name == "postgres" {
				pgtest.Require(t)
			}
			testUploadQuotaPerClient(t, qs.options(t))
		})
	}
}

func testUploadQuotaPerClient(t *testing.T, on func(Options) Options) {
	const grace = 2 * time.Second
	srv, ts := newTestServer(t, on(Options{UploadDir: t.TempDir(), UploadQuota: 100000, ClientUploadQuota: 3000, UploadGrace: grace,
		Flags: map[string]string{"UploadQuota": "-upload-quota", "ClientUploadQuota": "-client-upload-quota"}}))
	path := func(out map[string]any) string { return out["path"].(string) }
	sum := func(p string) string { return strings.TrimPrefix(p, "upload:") }
	onDisk := func(p string) bool {
		_, err := os.Stat(filepath.Join(srv.uploads.dir, sum(p)))
		return err == nil
	}
	// kept: the server still holds the file (on PostgreSQL: the store
	// keeps it, and this server's copy is gone once it does not)
	kept := func(p string) bool {
		sh := srv.uploads.shared
		if sh == nil {
			return onDisk(p)
		}
		k, err := sh.KeptDataFiles(context.Background(), []string{sum(p)})
		if err != nil {
			t.Fatal(err)
		}
		return k[sum(p)]
	}
	// a run ends on SQLite; on PostgreSQL it stays queued (no worker here)
	finish := func(id string) {
		if srv.uploads.shared == nil {
			waitFinished(t, srv, id)
		}
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
	finish(id)
	code2, body := do(t, "POST", ts.URL+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{id}}))
	if code2 != 200 {
		t.Fatalf("delete: %d %s", code2, body)
	}
	if kept(a[0]) || onDisk(a[0]) {
		t.Errorf("the file of the deleted run is still stored (kept %v, on disk %v)", kept(a[0]), onDisk(a[0]))
	}
	// a file's name goes with it
	names := func(p string) string {
		n, err := srv.st.UploadNames(context.Background(), []string{sum(p)})
		if err != nil {
			t.Fatal(err)
		}
		return n[sum(p)]
	}
	if names(a[0]) != "" || names(a[1]) != "x.csv" {
		t.Errorf("after the delete, the store names the deleted run's file %q, the other %q", names(a[0]), names(a[1]))
	}
	code, out = uploadFrom(t, ts.URL, "127.0.0.1", csvOf(4))
	if code != 201 {
		t.Fatalf("client A after deleting the run naming its file: %d %v", code, out)
	}
	a = append(a, path(out))
	// a run names the newest file: it stays past the grace, the unnamed
	// one goes
	sp.Params["data"] = a[2]
	named := create(t, ts, sp)
	finish(named)
	waitFor(t, "the unnamed file's grace", func() bool {
		code, out := uploadFrom(t, ts.URL, "127.0.0.1", csvOf(5))
		if code == 201 {
			a = append(a, path(out))
		}
		return code == 201
	})
	if kept(a[1]) || !kept(a[2]) {
		t.Errorf("after the grace: the unnamed file stored %v, the named one %v", kept(a[1]), kept(a[2]))
	}
	if names(a[1]) != "" || names(a[2]) != "x.csv" {
		t.Errorf("after the grace, the store names the unnamed file %q, the named one %q", names(a[1]), names(a[2]))
	}
}

// Two servers on one PostgreSQL database share each client's quota: one
// client's uploads sent to both at once are taken up to its quota in all,
// not up to it on each (the store counts them in the transaction that
// keeps each file).
func TestUploadQuotaPerClientTwoServers(t *testing.T) {
	pgtest.Require(t)
	on := quotaStores[1].options(t)
	const quota = 3000 // two of the 1200-byte files
	var urls []string
	for range 2 {
		_, ts := newTestServer(t, on(Options{UploadDir: t.TempDir(), UploadQuota: 100000, ClientUploadQuota: quota, UploadGrace: time.Hour,
			Flags: map[string]string{"ClientUploadQuota": "-client-upload-quota"}}))
		urls = append(urls, ts.URL)
	}
	const each = 5 // csvOf gives ten different files
	codes := make([]int, 2*each)
	paths := make([]string, 2*each)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := uploadFrom(t, urls[i%2], "127.0.0.1", csvOf(i))
			if msg, _ := out["error"].(string); code == 413 && !strings.Contains(msg, "this client's") {
				t.Errorf("upload %d refused over another quota than the client's: %v", i, out)
			}
			codes[i] = code
			paths[i], _ = out["path"].(string)
		}()
	}
	wg.Wait()
	took, n := -1, 0 // the first file taken, how many
	for i, c := range codes {
		if c == 201 {
			n++
			if took < 0 {
				took = i
			}
		}
	}
	if n != quota/1200 {
		t.Fatalf("the two servers took %d of the client's %d files (codes %v); its quota holds %d", n, len(codes), codes, quota/1200)
	}
	// a run submitted to the other server names the file, and deleting
	// it there gives the client its bytes back on both
	other := urls[(took+1)%2]
	sp := fakeRun(5, "fw")
	sp.Params["data"] = paths[took]
	code, body := do(t, "POST", other+"/api/runs", mustJSON(t, sp))
	if code != 201 {
		t.Fatalf("a run on the other server naming the upload: %d %s", code, body)
	}
	var run struct{ ID string }
	if err := json.Unmarshal(body, &run); err != nil {
		t.Fatal(err)
	}
	if code, body := do(t, "POST", other+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{run.ID}})); code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if code, out := uploadFrom(t, urls[took%2], "127.0.0.1", []byte(strings.Repeat("4,5,6\n", 200))); code != 201 {
		t.Errorf("the client after the run naming its file was deleted on the other server: %d %v", code, out)
	}
}
