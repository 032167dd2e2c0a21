// Package loadtest drives a dashboard server (on a run store in a
// temporary file) on loopback with many clients at once, as `make loadtest`
// does: each client starts a small run and subscribes to its stream; some
// disconnect mid-stream, some cancel their run. Faults run beside them: one
// client trickles a large bundle import, viewers read a hostile stored run
// (2 000 extra metrics, a task graph naming node 30 000 000) as its page
// would, and a run is deleted while it downloads. It reports the requests
// made, the errors by kind, the time between records batches seen by the
// live subscribers (p50 and p99), the peak memory and what the faults saw,
// and then checks that every run reached a final status, that every trace
// of a finished run is complete (k = 0, 1, … without gaps), that every
// download that ended cleanly is whole, that the peak RSS stayed under the
// server's -mem, and that the goroutines went back to their idle count. The
// test is bounded in clients and time and stops by itself.
package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// Config sets the load.
type Config struct {
	Clients int // clients, each with one run (default 100)
	// Iters per trace of each run (two traces: two replications of fw on
	// the toy polygon; default 5000).
	Iters int
	// Every DisconnectEvery-th client drops its stream after a few batches
	// and every CancelEvery-th cancels its run (defaults 5 and 7).
	DisconnectEvery, CancelEvery int
	// Timeout bounds the whole test (default 3 minutes).
	Timeout time.Duration
	// Mem is the server's memory budget (-mem; default 512 MiB): the
	// process's peak RSS must stay under it.
	Mem int64
	// Faults beside the clients: one client trickles a bundle of
	// ImportRecords records at TrickleRate bytes per second (default
	// 100 000 records at 4 MiB/s), HostileViewers read a stored run with
	// 2 000 extra metrics and a task graph naming node 30 000 000 as its
	// page would (default 2), and a run of CutRecords records is deleted
	// while it downloads (default 200 000). A negative value turns a fault
	// off.
	ImportRecords, TrickleRate, HostileViewers, CutRecords int
	// DiskSize, when positive, puts the run store on a file system of
	// that many bytes (a tmpfs mounted for the test; root only, else the
	// report says it was skipped), so that the disk fills during the load:
	// runs the store cannot hold must end failed naming the store, never
	// done with a record missing, and /healthz must say degraded.
	DiskSize int64
}

func (c Config) withDefaults() Config {
	if c.Clients <= 0 {
		c.Clients = 100
	}
	if c.Iters <= 0 {
		c.Iters = 5000
	}
	if c.DisconnectEvery <= 0 {
		c.DisconnectEvery = 5
	}
	if c.CancelEvery <= 0 {
		c.CancelEvery = 7
	}
	if c.Timeout <= 0 {
		c.Timeout = 3 * time.Minute
	}
	if c.Mem <= 0 {
		c.Mem = 512 << 20
	}
	if c.ImportRecords == 0 {
		c.ImportRecords = 100_000
	}
	if c.TrickleRate <= 0 {
		c.TrickleRate = 4 << 20
	}
	if c.HostileViewers == 0 {
		c.HostileViewers = 2
	}
	if c.CutRecords == 0 {
		c.CutRecords = 200_000
	}
	return c
}

// Report is what a load test measured and checked.
type Report struct {
	Clients        int
	Requests       int64
	Errors         map[string]int // by kind
	Batches        int            // records messages seen by the live subscribers
	GapP50, GapP99 time.Duration  // between records batches of a live subscriber
	PeakRSS        int64          // bytes (the process: server and clients)
	Mem            int64          // the server's memory budget (-mem)
	Faults         string         // what the faults beside the clients saw
	Statuses       map[string]int // final run statuses
	TracesChecked  int            // traces of finished runs checked for gaps
	Problems       []string       // failed checks
	GoroutinesIdle int            // before the clients
	GoroutinesEnd  int            // after the clients left and the runs ended
	Elapsed        time.Duration
}

// OK reports whether every check held.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// String formats the report.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "clients            %d\n", r.Clients)
	fmt.Fprintf(&b, "requests           %d (HTTP and websocket dials)\n", r.Requests)
	kinds := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if len(kinds) == 0 {
		fmt.Fprintf(&b, "errors             none\n")
	}
	for _, k := range kinds {
		fmt.Fprintf(&b, "errors             %-40s %d\n", k, r.Errors[k])
	}
	fmt.Fprintf(&b, "batches            %d to live subscribers; time between batches p50 %v, p99 %v\n", r.Batches, r.GapP50.Round(time.Microsecond), r.GapP99.Round(time.Microsecond))
	fmt.Fprintf(&b, "peak RSS           %.1f MiB (server and clients in one process; -mem %.0f MiB)\n", float64(r.PeakRSS)/(1<<20), float64(r.Mem)/(1<<20))
	b.WriteString(r.Faults)
	st := make([]string, 0, len(r.Statuses))
	for k, n := range r.Statuses {
		st = append(st, k+" "+strconv.Itoa(n))
	}
	sort.Strings(st)
	fmt.Fprintf(&b, "final statuses     %s\n", strings.Join(st, ", "))
	fmt.Fprintf(&b, "traces checked     %d complete (k without gaps)\n", r.TracesChecked)
	fmt.Fprintf(&b, "goroutines         %d idle, %d at the end\n", r.GoroutinesIdle, r.GoroutinesEnd)
	fmt.Fprintf(&b, "elapsed            %v\n", r.Elapsed.Round(time.Millisecond))
	if r.OK() {
		fmt.Fprintf(&b, "result             every check held\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "FAILED             %s\n", p)
	}
	return b.String()
}

type tally struct {
	mu       sync.Mutex
	requests int64
	errors   map[string]int
	gaps     []time.Duration
}

func (t *tally) req() {
	t.mu.Lock()
	t.requests++
	t.mu.Unlock()
}

func (t *tally) fail(kind string) {
	t.mu.Lock()
	t.errors[kind]++
	t.mu.Unlock()
}

// Run starts a server on a loopback port, runs the clients and checks the
// outcome. The error is for a test that could not be set up; failed checks
// are in the report.
func Run(ctx context.Context, c Config) (*Report, error) {
	c = c.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	start := time.Now()
	runtime.GC()
	idle := runtime.NumGoroutine()

	dir, err := os.MkdirTemp("", "fwlab-loadtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	f := &faultReport{}
	small := false
	if c.DiskSize > 0 {
		unmount, why := mountSmall(dir, c.DiskSize)
		if why != "" {
			f.diskNote = "skipped: " + why
		} else {
			small = true
			f.diskNote = fmt.Sprintf("the store on a %.0f MiB file system", float64(c.DiskSize)/(1<<20))
			defer unmount()
		}
	}
	dbPath := filepath.Join(dir, "runs.db")
	st, err := store.Open(dbPath)
	if err != nil {
		return nil, err
	}
	closeStore := sync.OnceValue(st.Close)
	defer closeStore()
	srv, err := newServer(c, st, dir)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	hostile := ""
	if c.HostileViewers > 0 {
		if hostile, err = putHostileRun(ctx, st, 300); err != nil {
			_ = srv.Close()
			return nil, fmt.Errorf("storing the hostile run: %w", err)
		}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	peak := newPeak()
	t := &tally{errors: map[string]int{}}
	f.diskFill = small
	stopFaults := make(chan struct{})
	var fwg sync.WaitGroup
	startFaults(ctx, c, hc, base, hostile, stopFaults, &fwg, t, f)
	ids := runClients(ctx, c, hc, base, t)
	close(stopFaults)
	fwg.Wait()
	peak.sample()
	if small {
		f.health = health(ctx, hc, base)
	}

	rep := &Report{Clients: c.Clients, Statuses: map[string]int{}, Mem: c.Mem, Faults: f.String()}
	rep.Problems = append(rep.Problems, f.problems...)
	rep.checkRuns(ctx, hc, base, ids, t, small, dbPath)
	peak.sample()

	// Shut down and count the goroutines left.
	hc.CloseIdleConnections()
	_ = srv.Close()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = hs.Shutdown(sctx)
	scancel()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		rep.problem("serve: %v", err)
	}
	tr.CloseIdleConnections()
	if err := closeStore(); err != nil {
		rep.problem("closing the store: %v", err)
	}
	peak.sample()
	peak.stop()
	rep.countGoroutines(idle)
	rep.measure(t, peak, c.Mem)
	rep.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		rep.problem("the load test ran out of its %v", c.Timeout)
	}
	return rep, nil
}

// newServer makes the dashboard server on the store, with room for every
// client's runs and streams and the budget c.Mem.
func newServer(c Config, st *store.Store, dir string) (*server.Server, error) {
	return server.New(server.Options{
		ListenAddr:          "127.0.0.1:0",
		MaxStreamsPerClient: 4 * c.Clients,
		UploadDir:           dir,
		Session: session.Options{
			Store:     st,
			MaxStored: 2 * c.Clients, MaxClientRuns: 2 * c.Clients, MaxQueued: 2 * c.Clients,
			MaxMemory: c.Mem,
		},
	})
}

// runClients runs the clients at once, each in its role (every
// CancelEvery-th cancels its run, every DisconnectEvery-th drops its
// stream, the others follow it live), and returns their runs' ids.
func runClients(ctx context.Context, c Config, hc *http.Client, base string, t *tally) []string {
	ids := make([]string, c.Clients)
	var wg sync.WaitGroup
	for i := 0; i < c.Clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			role := "live"
			switch {
			case i%c.CancelEvery == c.CancelEvery-1:
				role = "cancel"
			case i%c.DisconnectEvery == c.DisconnectEvery-1:
				role = "disconnect"
			}
			ids[i] = client(ctx, hc, base, c.Iters, role, t)
		}(i)
	}
	wg.Wait()
	return ids
}

// problem adds a failed check to the report.
func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// checkRuns waits for every run to reach a final status and counts the
// statuses. A finished run's traces must be complete; with the store on a
// small file system (small), a run the full store stopped must say so,
// naming the store's file dbPath, and its trace hold exactly the records
// it reports.
func (r *Report) checkRuns(ctx context.Context, hc *http.Client, base string, ids []string, t *tally, small bool, dbPath string) {
	final := map[string]bool{session.StatusDone: true, session.StatusFailed: true, session.StatusCancelled: true}
	for _, id := range ids {
		if id == "" {
			continue
		}
		var st session.Status
		for {
			t.req()
			if err := getJSON(ctx, hc, base+"/api/runs/"+id, &st); err != nil {
				r.problem("status of %s: %v", id, err)
				break
			}
			if final[st.Status] || ctx.Err() != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		r.Statuses[st.Status]++
		if !final[st.Status] {
			r.problem("run %s is %s at the end", id, st.Status)
			continue
		}
		if st.Status == session.StatusFailed && small {
			// A run the full store stopped says so, and its trace holds
			// exactly the records it reports.
			if !strings.Contains(st.Message, dbPath) {
				r.problem("run %s failed with %q, not naming the store %s", id, st.Message, dbPath)
			}
			if n, err := checkTrace(ctx, hc, base, id, st, t, false); err != nil {
				r.problem("trace of failed run %s: %v", id, err)
			} else {
				r.TracesChecked += n
			}
			continue
		}
		if st.Status != session.StatusDone {
			continue
		}
		// A finished run's traces are complete: k = 0, 1, … without gaps.
		n, err := checkTrace(ctx, hc, base, id, st, t, true)
		r.TracesChecked += n
		if err != nil {
			r.problem("trace of %s: %v", id, err)
		}
	}
}

// countGoroutines waits for the goroutines to go back to idle, their
// count before the server started, and reports the stacks of any left.
func (r *Report) countGoroutines(idle int) {
	r.GoroutinesIdle = idle
	r.GoroutinesEnd = settle(idle)
	if r.GoroutinesEnd > idle {
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, true)]
		r.problem("%d goroutines left, %d before the server started:\n%s", r.GoroutinesEnd, idle, buf)
	}
}

// measure copies the tally's requests, errors and batches into the
// report, with the time between batches (p50, p99) and the peak RSS,
// which must stay under the server's budget mem.
func (r *Report) measure(t *tally, peak *peakRSS, mem int64) {
	t.mu.Lock()
	r.Requests, r.Errors, r.Batches = t.requests, t.errors, len(t.gaps)
	gaps := append([]time.Duration(nil), t.gaps...)
	t.mu.Unlock()
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	if len(gaps) > 0 {
		r.GapP50 = gaps[len(gaps)/2]
		r.GapP99 = gaps[min(len(gaps)-1, len(gaps)*99/100)]
	}
	r.PeakRSS = peak.max()
	if r.PeakRSS > mem {
		r.problem("peak RSS %.1f MiB over the server's -mem of %.0f MiB", float64(r.PeakRSS)/(1<<20), float64(mem)/(1<<20))
	}
}

// startFaults starts the faults beside the clients: the trickled import
// and the cut download run once, the hostile run's viewers until stop.
func startFaults(ctx context.Context, c Config, hc *http.Client, base, hostile string, stop <-chan struct{}, wg *sync.WaitGroup, t *tally, f *faultReport) {
	if c.ImportRecords > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trickleImport(ctx, hc, base, c.ImportRecords, c.TrickleRate, t, f)
		}()
	}
	if c.CutRecords > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cutDownload(ctx, hc, base, c.CutRecords, t, f)
		}()
	}
	for i := 0; hostile != "" && i < c.HostileViewers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			viewHostile(ctx, hc, base, hostile, 300, stop, t, f)
		}()
	}
}

// checkTrace downloads a finished run's trace and checks that each trace's
// records run k = 0, 1, … without gaps, as many as its status says (and,
// when whole is set, every iteration its summary counts).
func checkTrace(ctx context.Context, hc *http.Client, base, id string, st session.Status, t *tally, whole bool) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/runs/"+id+"/trace", nil)
	t.req()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	next := make([]int, len(st.Traces))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r struct{ Trace, K int }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return 0, err
		}
		if r.Trace < 0 || r.Trace >= len(next) || r.K != next[r.Trace] {
			return 0, fmt.Errorf("trace %d: k = %d where %d was due", r.Trace, r.K, next[min(max(r.Trace, 0), len(next)-1)])
		}
		next[r.Trace]++
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	for i, ts := range st.Traces {
		if next[i] != ts.Records || (whole && (ts.Summary == nil || ts.Summary.Iters+1 != ts.Records)) {
			return 0, fmt.Errorf("trace %d: %d records downloaded, %d reported", i, next[i], ts.Records)
		}
	}
	return len(st.Traces), nil
}

// settle waits (up to 5 s) until at most target goroutines run.
func settle(target int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		n := runtime.NumGoroutine()
		if n <= target || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// peakRSS samples the process's resident set every 50 ms; the kernel's
// high-water mark (VmHWM) is used where it is available.
type peakRSS struct {
	mu   sync.Mutex
	best int64
	quit chan struct{}
	done chan struct{}
}

func newPeak() *peakRSS {
	// Reset the kernel's high-water mark, so that a second round in the
	// same process measures its own peak (Linux; elsewhere a no-op).
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	p := &peakRSS{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-tk.C:
				p.sample()
			}
		}
	}()
	return p
}

func (p *peakRSS) sample() {
	n := statusBytes("VmHWM:")
	if n == 0 {
		n = statusBytes("VmRSS:")
	}
	if n == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		n = int64(ms.Sys)
	}
	p.mu.Lock()
	p.best = max(p.best, n)
	p.mu.Unlock()
}

func (p *peakRSS) stop() {
	close(p.quit)
	<-p.done
}

func (p *peakRSS) max() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.best
}

// statusBytes reads a "kB" field of /proc/self/status (0 when absent).
func statusBytes(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
