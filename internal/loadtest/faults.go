package loadtest

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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// faultReport is what the faults beside the clients saw.
type faultReport struct {
	mu sync.Mutex
	// The trickled import: its size, how long it took and how it ended.
	importBytes   int64
	importTook    time.Duration
	importOutcome string
	// The hostile stored run: the answers its viewers got, and how many
	// downloads ended cleanly (each checked to be whole).
	hostileViews, hostileWhole int
	// Downloads cut by a delete: how many ended with an error, how many
	// whole.
	cutBroken, cutWhole int
	cutDelete           string // the delete's answer
	// The disk: what was set up, whether it fills, and /healthz after.
	diskNote string
	diskFill bool
	health   string
	problems []string
}

func (f *faultReport) problem(format string, args ...any) {
	f.mu.Lock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func (f *faultReport) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	if f.diskNote != "" {
		fmt.Fprintf(&b, "disk fill          %s", f.diskNote)
		if f.health != "" {
			fmt.Fprintf(&b, "; /healthz after: %s", f.health)
		}
		b.WriteString("\n")
	}
	if f.importBytes > 0 {
		fmt.Fprintf(&b, "trickled import    %.1f MiB in %v: %s\n", float64(f.importBytes)/(1<<20), f.importTook.Round(time.Millisecond), f.importOutcome)
	}
	if f.hostileViews > 0 {
		fmt.Fprintf(&b, "hostile run viewed %d answers, %d downloads ended cleanly and were whole\n", f.hostileViews, f.hostileWhole)
	}
	if f.cutBroken+f.cutWhole > 0 || f.cutDelete != "" {
		fmt.Fprintf(&b, "cut downloads      %d broke off visibly, %d ended cleanly (each checked whole; the delete midway: %s)\n", f.cutBroken, f.cutWhole, f.cutDelete)
	}
	return b.String()
}

// importBundle is a finished run of one trace of n records as a bundle.
func importBundle(n int) []byte {
	recs := make([]solver.Record, n)
	for k := range recs {
		recs[k] = solver.Record{K: k, Passes: float64(k), Time: float64(k) * 1e-6, Step: solver.StepFW, Gamma: 2 / float64(k+2),
			Active: 3, FWSteps: k, Objective: solver.F(1 / float64(k+1)), Gap: solver.F(2 / float64(k+1))}
	}
	b := &bundle.Bundle{
		Version: "loadtest", Status: store.StatusDone, Created: time.Now().UTC(),
		Spec: spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "fw"}}, Iters: n - 1, Replications: 1, Seed: 1},
		Info: bundle.Info{Dim: 2, Samples: 3, Blocks: 1},
		Traces: []bundle.Trace{{Algo: "fw", Replication: 0, Seed: 1, Status: solver.StatusMaxIters, Records: recs,
			Summary: &solver.Summary{Objective: 1 / float64(n), Gap: 2 / float64(n), Iters: n - 1, Passes: float64(n - 1), Status: solver.StatusMaxIters}}},
	}
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		panic(err) // a bundle built here always encodes
	}
	return buf.Bytes()
}

// trickleImport posts a bundle of n records at about rate bytes per second
// and checks what the server made of it: a run holding every record, or a
// clear refusal.
func trickleImport(ctx context.Context, hc *http.Client, base string, n, rate int, t *tally, f *faultReport) {
	body := importBundle(n)
	pr, pw := io.Pipe()
	go func() {
		chunk := max(rate/20, 512)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for off := 0; off < len(body); off += chunk {
			select {
			case <-ctx.Done():
				pw.CloseWithError(ctx.Err())
				return
			case <-tk.C:
			}
			if _, err := pw.Write(body[off:min(off+chunk, len(body))]); err != nil {
				return
			}
		}
		_ = pw.Close()
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/runs/import", pr)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	t.req()
	resp, err := hc.Do(req)
	f.mu.Lock()
	f.importBytes, f.importTook = int64(len(body)), time.Since(start)
	f.mu.Unlock()
	if err != nil {
		f.problem("trickled import: %v", err)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	var out struct {
		ID, Error string
		StatusURL string `json:"status_url"`
	}
	_ = json.Unmarshal(b, &out)
	outcome := "HTTP " + strconv.Itoa(resp.StatusCode)
	if resp.StatusCode == http.StatusAccepted && out.StatusURL != "" {
		// Answered before the body was read: follow the import's status.
		code, id, msg, err := followImport(ctx, hc, base+out.StatusURL, t)
		if err != nil {
			f.problem("trickled import: %s: %v", out.StatusURL, err)
			return
		}
		outcome += fmt.Sprintf(" then %d", code)
		resp.StatusCode, out.ID, out.Error = code, id, msg
		f.mu.Lock()
		f.importTook = time.Since(start)
		f.mu.Unlock()
	}
	switch {
	case (resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK) && out.ID != "":
		got, err := countRecords(ctx, hc, base, out.ID, t)
		switch {
		case err != nil:
			f.problem("trickled import %s: %v", out.ID, err)
		case got != n:
			f.problem("trickled import %s holds %d of %d records", out.ID, got, n)
		default:
			outcome += fmt.Sprintf(", run %s holds all %d records", out.ID, n)
		}
	case resp.StatusCode >= 400 && resp.StatusCode < 600 && out.Error != "":
		outcome += ": " + out.Error
	default:
		f.problem("trickled import: HTTP %d %.200s", resp.StatusCode, b)
	}
	f.mu.Lock()
	f.importOutcome = outcome
	f.mu.Unlock()
}

// followImport polls an import's status URL until the import has ended and
// returns the code it ended with and the run's id or the error.
func followImport(ctx context.Context, hc *http.Client, url string, t *tally) (int, string, string, error) {
	for {
		var st struct {
			Status, ID, Error string
			Code              int
		}
		t.req()
		if err := getJSON(ctx, hc, url, &st); err != nil {
			return 0, "", "", err
		}
		if st.Status != "importing" {
			return st.Code, st.ID, st.Error, nil
		}
		select {
		case <-ctx.Done():
			return 0, "", "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// countRecords downloads a run's trace and counts its records; a download
// that breaks off is an error.
func countRecords(ctx context.Context, hc *http.Client, base, id string, t *tally) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/runs/"+id+"/trace", nil)
	t.req()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("trace: HTTP %d", resp.StatusCode)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}

// putHostileRun stores a finished run as a hostile bundle from elsewhere
// could leave it: every record carries 2 000 extra metrics and the task
// graph names node 30 000 000.
func putHostileRun(ctx context.Context, st *store.Store, n int) (string, error) {
	panels := `{"edges":[[0,1,0.5],[0,30000000,1]],"components":[[0,1,30000000]]}`
	id, err := st.PutRun(ctx, &store.Run{
		Spec:     spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "fw"}}, Iters: n - 1, Replications: 1, Seed: 1},
		Instance: store.Instance{Dim: 2, Samples: 3, Blocks: 1, Panels: json.RawMessage(panels)},
		Version:  "loadtest", Status: store.StatusRunning, Created: time.Now().UTC(),
		Traces: []store.Trace{{Index: 0, Algo: "fw", Replication: 0, Seed: 1, Status: store.StatusRunning}},
	})
	if err != nil {
		return "", err
	}
	extra := make(map[string]float64, 2000)
	for j := 0; j < 2000; j++ {
		extra["m"+strconv.Itoa(j)] = float64(j)
	}
	recs := make([]solver.Record, 0, 50)
	for k := 0; k < n; k++ {
		recs = append(recs, solver.Record{K: k, Step: solver.StepFW, Objective: solver.F(1 / float64(k+1)), Extra: extra})
		if len(recs) == cap(recs) || k == n-1 {
			if err := st.AppendRecords(ctx, id, 0, recs); err != nil {
				return "", err
			}
			recs = recs[:0]
		}
	}
	if err := st.SetTrace(ctx, id, 0, store.TraceResult{Status: solver.StatusMaxIters, Summary: &solver.Summary{Iters: n - 1, Status: solver.StatusMaxIters}}); err != nil {
		return "", err
	}
	return id, st.SetStatus(ctx, id, store.StatusDone, time.Now().UTC())
}

// viewHostile reads the hostile run as its page and a user would (status,
// panels, trace as JSON Lines and CSV, bundle, figure) until stop, checking
// that every answer is bounded and every download that ends cleanly is
// whole.
func viewHostile(ctx context.Context, hc *http.Client, base, id string, n int, stop <-chan struct{}, t *tally, f *faultReport) {
	paths := []string{"", "/panels", "/trace", "/trace?format=csv", "/bundle", "/figure.svg"}
	for i := 0; ; i++ {
		// Every path at least once, then until the clients are done.
		select {
		case <-stop:
			if i >= len(paths) {
				return
			}
		case <-ctx.Done():
			return
		default:
		}
		p := paths[i%len(paths)]
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/runs/"+id+p, nil)
		t.req()
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				f.problem("hostile run %s: %v", p, err)
			}
			return
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
		resp.Body.Close()
		f.mu.Lock()
		f.hostileViews++
		f.mu.Unlock()
		if err != nil {
			continue // broke off visibly: nothing to check
		}
		if resp.StatusCode != http.StatusOK {
			f.problem("hostile run %s: HTTP %d %.200s", p, resp.StatusCode, body)
			continue
		}
		if werr := wholeHostile(p, body, n); werr != nil {
			f.problem("hostile run %s: %v", p, werr)
			continue
		}
		if p == "/trace" || p == "/trace?format=csv" || p == "/bundle" {
			f.mu.Lock()
			f.hostileWhole++
			f.mu.Unlock()
		}
	}
}

// wholeHostile checks a download of the hostile run that ended cleanly.
func wholeHostile(path string, body []byte, n int) error {
	switch path {
	case "/trace":
		if got := bytes.Count(body, []byte("\n")); got != n {
			return fmt.Errorf("%d of %d records in a download that ended cleanly", got, n)
		}
	case "/trace?format=csv":
		if got := bytes.Count(body, []byte("\n")); got != n+1 {
			return fmt.Errorf("%d of %d lines in a download that ended cleanly", got, n+1)
		}
	case "/bundle":
		if !json.Valid(body) {
			return fmt.Errorf("a bundle of %d bytes that ended cleanly is not JSON", len(body))
		}
		if got := bytes.Count(body, []byte(`{"k":`)); got != n {
			return fmt.Errorf("a bundle that ended cleanly holds %d of %d records", got, n)
		}
	case "":
		if len(body) > 1<<20 {
			return fmt.Errorf("a status of %d bytes", len(body))
		}
	}
	return nil
}

// cutDownload starts a run of n records, reads its trace slowly and deletes
// the run midway: the download must break off visibly or be whole.
func cutDownload(ctx context.Context, hc *http.Client, base string, n int, t *tally, f *faultReport) {
	body := fmt.Sprintf(`{"problem":"toy-polygon","algorithms":[{"algo":"fw"}],"iters":%d,"eval_every":100}`, n-1)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/runs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	t.req()
	resp, err := hc.Do(req)
	if err != nil {
		f.problem("cut download: create: %v", err)
		return
	}
	var out struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && f.diskFill {
		f.mu.Lock()
		f.cutDelete = "not tried: the full store refused the run (503)"
		f.mu.Unlock()
		return
	}
	if resp.StatusCode != http.StatusCreated {
		f.problem("cut download: create: HTTP %d", resp.StatusCode)
		return
	}
	for {
		var st struct{ Status string }
		t.req()
		if err := getJSON(ctx, hc, base+"/api/runs/"+out.ID, &st); err != nil {
			f.problem("cut download: status: %v", err)
			return
		}
		if st.Status == "done" {
			// Give the finished run a moment to leave memory: its
			// download then reads the store, which the delete empties.
			time.Sleep(time.Second)
			break
		}
		if st.Status != "running" && st.Status != "queued" {
			if st.Status == "failed" && f.diskFill {
				f.mu.Lock()
				f.cutDelete = "not tried: the run failed on the full store"
				f.mu.Unlock()
				return
			}
			f.problem("cut download: the run ended %s", st.Status)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", base+"/api/runs/"+out.ID+"/trace", nil)
	req.Header.Set("Accept-Encoding", "identity")
	t.req()
	resp, err = hc.Do(req)
	if err != nil {
		f.problem("cut download: %v", err)
		return
	}
	defer resp.Body.Close()
	var deleted atomic.Bool
	lines, buf := 0, make([]byte, 16<<10)
	for {
		k, rerr := resp.Body.Read(buf)
		lines += bytes.Count(buf[:k], []byte("\n"))
		if lines > n/10 && !deleted.Swap(true) {
			dreq, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/runs/delete", strings.NewReader(`{"ids":["`+out.ID+`"]}`))
			dreq.Header.Set("Content-Type", "application/json")
			t.req()
			answer := ""
			if dresp, err := hc.Do(dreq); err == nil {
				b, _ := io.ReadAll(io.LimitReader(dresp.Body, 4096))
				dresp.Body.Close()
				answer = fmt.Sprintf("HTTP %d %s", dresp.StatusCode, bytes.TrimSpace(b))
			} else {
				answer = err.Error()
			}
			f.mu.Lock()
			f.cutDelete = answer
			f.mu.Unlock()
		}
		if rerr == io.EOF {
			f.mu.Lock()
			f.cutWhole++
			f.mu.Unlock()
			if lines != n {
				f.problem("cut download: %d of %d records in a download that ended cleanly", lines, n)
			}
			return
		}
		if rerr != nil {
			f.mu.Lock()
			f.cutBroken++
			f.mu.Unlock()
			return
		}
		time.Sleep(time.Millisecond) // a slow reader
	}
}

// mountSmall mounts a tmpfs of size bytes on dir (as root) and returns how
// to unmount it, or why it could not.
func mountSmall(dir string, size int64) (func(), string) {
	if os.Geteuid() != 0 {
		return nil, "mounting a small file system needs root"
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", dir).CombinedOutput()
	if err != nil {
		return nil, "mount -t tmpfs failed: " + strings.TrimSpace(string(out))
	}
	return func() { _ = exec.Command("umount", dir).Run() }, ""
}

// health returns the first line of /healthz.
func health(ctx context.Context, hc *http.Client, base string) string {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/healthz", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return fmt.Sprintf("%d %s", resp.StatusCode, line)
}
