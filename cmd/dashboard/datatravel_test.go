package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// lassoCSV returns the CSV of a rows × cols X and of its y.
func lassoCSV(seed uint64, rows, cols int) (x, y []byte) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var xb, yb bytes.Buffer
	for i := 0; i < rows; i++ {
		sum := 0.0
		for j := 0; j < cols; j++ {
			v := rng.NormFloat64()
			if j < 2 {
				sum += v
			}
			if j > 0 {
				xb.WriteByte(',')
			}
			fmt.Fprintf(&xb, "%.6f", v)
		}
		xb.WriteByte('\n')
		fmt.Fprintf(&yb, "%.6f\n", sum+0.1*rng.NormFloat64())
	}
	return xb.Bytes(), yb.Bytes()
}

// upload sends a file to POST /api/uploads and returns the path a spec
// names it by.
func upload(t *testing.T, url, name string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	resp, err := http.Post(url+"/api/uploads", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct{ Path string }
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload %s: %s %s", name, resp.Status, b)
	}
	return out.Path
}

// TestDataTravelsWithTheRun: a sweep over an uploaded CSV, started through
// a -slots 0 server, runs on worker processes that have no copy of it (the
// upload travels in the store): every cell done on the uploaded data. A
// run naming a file of the server's -data folder runs on a worker whose
// own -data holds the same bytes, and fails at once, naming the file, on
// a worker whose file differs or is missing.
func TestDataTravelsWithTheRun(t *testing.T) {
	db, st := pgStore(t)
	ctx := context.Background()
	serverData, sameData, otherData, emptyData := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	x, y := lassoCSV(1, 30, 6)
	x2, _ := lassoCSV(2, 30, 6)
	for dir, xs := range map[string][]byte{serverData: x, sameData: x, otherData: x2} {
		if err := os.WriteFile(filepath.Join(dir, "x.csv"), xs, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "y.csv"), y, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := startChild(t, "-db", db, "-slots", "0", "-data", serverData)
	ux, uy := upload(t, srv.url, "x.csv", x), upload(t, srv.url, "y.csv", y)
	cache0, cache1 := t.TempDir(), t.TempDir()
	w0 := startWorkerProc(t, db, "w0", "-slots", "2", "-data", emptyData, "-cache", cache0)
	w1 := startWorkerProc(t, db, "w1", "-slots", "2", "-data", emptyData, "-cache", cache1)
	sid := post(t, srv.url+"/api/sweeps", fmt.Sprintf(`{"base":{"problem":"lasso","params":{"x":%q,"y":%q,"lambda":"1"},"algorithms":[{"algo":"ssfw-as"}],"replications":1,"iters":200},
		"axes":[{"param":"params.lambda","values":["0.5","1","2","4"]}]}`, ux, uy))
	waitUntil(t, 2*time.Minute, "the sweep's end", func() bool {
		sw, err := st.GetSweep(ctx, sid)
		return err == nil && !store.Live(sw.Status)
	})
	sw, _ := st.GetSweep(ctx, sid)
	if sw.Status != store.StatusDone {
		t.Fatalf("sweep %s\n%s\n%s", sw.Status, w0.output(), w1.output())
	}
	for _, cell := range sw.Cells {
		r, err := st.Get(ctx, cell.RunID)
		if err != nil {
			t.Fatal(err)
		}
		// the uploaded data, not the generated: its 30 rows and 6 columns
		if r.Status != store.StatusDone || r.Instance.Samples != 30 || r.Spec.Params["x"] != ux {
			t.Errorf("cell %d: %s (%q), %d samples, x %q", cell.Index, r.Status, r.Message, r.Instance.Samples, r.Spec.Params["x"])
		}
	}
	// the workers read the bytes kept in the store, fetched into their
	// caches under the content's hash (not the server's upload folder,
	// which only this one machine could read)
	for _, f := range []struct {
		name    string
		content []byte
	}{{"x.csv", x}, {"y.csv", y}} {
		sum := pgstore.SHA256(f.content)
		var found int
		for _, dir := range []string{cache0, cache1} {
			matches, _ := filepath.Glob(filepath.Join(dir, sum, "*"))
			for _, m := range matches {
				if b, err := os.ReadFile(m); err == nil && bytes.Equal(b, f.content) {
					found++
				}
			}
		}
		if found == 0 {
			t.Errorf("%s: no worker fetched it from the store", f.name)
		}
	}
	w0.cmd.Process.Kill()
	w1.cmd.Process.Kill()
	<-w0.done
	<-w1.done

	// a file of the server's -data folder: checked on each worker
	runOn := func(name, data string) *store.Run {
		t.Helper()
		w := startWorkerProc(t, db, name, "-slots", "1", "-data", data)
		defer func() { w.cmd.Process.Kill(); <-w.done }()
		id := post(t, srv.url+"/api/runs", `{"problem":"lasso","params":{"x":"x.csv","y":"y.csv","lambda":"1"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":100}`)
		var r *store.Run
		waitUntil(t, time.Minute, "the run's end on "+name, func() bool {
			var err error
			r, err = st.Get(ctx, id)
			return err == nil && !store.Live(r.Status)
		})
		return r
	}
	if r := runOn("same", sameData); r.Status != store.StatusDone || r.Instance.Samples != 30 {
		t.Errorf("on a worker with the same x.csv: %s (%q), %d samples", r.Status, r.Message, r.Instance.Samples)
	}
	for name, c := range map[string]struct{ data, want string }{
		"other": {otherData, "params.x: x.csv in this worker's -data folder " + otherData + " holds other bytes"},
		"none":  {emptyData, "params.x: this worker lacks x.csv in this worker's -data folder " + emptyData},
	} {
		r := runOn(name, c.data)
		if r.Status != store.StatusFailed || !strings.Contains(r.Message, c.want) || r.Traces[0].Records != 0 {
			t.Errorf("on a worker with %s data: %s, %q, %d records; want failed with %q", name, r.Status, r.Message, r.Traces[0].Records, c.want)
		}
	}
}
