package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func init() { sessiontest.Register() }

func fakeSpec(n int, params spec.Params, algos ...string) spec.Run {
	p := spec.Params{"n": itoa(n)}
	for k, v := range params {
		p[k] = v
	}
	sp := spec.Run{Problem: sessiontest.Name, Params: p, Seed: 1, Iters: max(n, 1)}
	for _, a := range algos {
		sp.Algorithms = append(sp.Algorithms, spec.Algo{Algo: a})
	}
	return sp
}

func itoa(n int) string { return strconv.Itoa(n) }

func newManager(t *testing.T, o session.Options) *session.Manager {
	t.Helper()
	m := session.NewManager(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return m
}

func waitDone(t *testing.T, r *session.Run) {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(60 * time.Second): // real solvers under -race on a loaded machine
		t.Fatalf("run %s did not finish: %s with %d records", r.ID, r.RunStatus(), r.Status().Records)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRunStoresEveryRecord(t *testing.T) {
	m := newManager(t, session.Options{})
	sp := fakeSpec(2000, nil, "ssfw-as", "fista")
	sp.Replications = 3
	sp.EvalEvery = 10
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	st := r.Status()
	if st.Status != session.StatusDone {
		t.Errorf("run status %q, want done", st.Status)
	}
	if len(st.Traces) != 6 {
		t.Fatalf("%d traces, want 6", len(st.Traces))
	}
	for i, ts := range st.Traces {
		wantAlgo := []string{"ssfw-as", "fista"}[i/3]
		if ts.Trace != i || ts.Algo != wantAlgo || ts.Replication != i%3 || ts.Seed != 1+int64(i%3) {
			t.Errorf("trace %d tags %+v", i, ts)
		}
		if ts.Status != solver.StatusMaxIters || ts.Records != 2001 || ts.Summary == nil || ts.Summary.Iters != 2000 {
			t.Errorf("trace %d: %+v", i, ts)
		}
		recs := r.Traces()[i].Records(0, 1<<30)
		for k, rec := range recs {
			if rec.K != k {
				t.Fatalf("trace %d record %d has k = %d", i, k, rec.K)
			}
			evaluated := rec.K == 0 || rec.K == 2000 || rec.K%10 == 0
			if rec.Evaluated() != evaluated {
				t.Fatalf("trace %d k=%d evaluated=%v", i, rec.K, rec.Evaluated())
			}
			if evaluated && *rec.Objective != sessiontest.Objective(ts.Seed, rec.K) {
				t.Fatalf("trace %d k=%d objective %v (seeds mixed up?)", i, rec.K, *rec.Objective)
			}
		}
	}
	if got := r.Spec(); got.Replications != 3 || got.Algorithms[1].L != "auto" {
		t.Errorf("spec not normalised: %+v", got)
	}
}

func TestCreateValidation(t *testing.T) {
	m := newManager(t, session.Options{MaxRecords: 1_000_000})
	cases := []struct {
		name  string
		sp    spec.Run
		field string
	}{
		{"unknown problem", spec.Run{Problem: "nope", Algorithms: []spec.Algo{{Algo: "fw"}}}, "problem"},
		{"bad param", fakeSpec(0, nil, "fw"), "params.n"},
		{"unknown param", fakeSpec(10, spec.Params{"nn": "3"}, "fw"), "params.nn"},
		{"algorithm not for problem", fakeSpec(10, nil, "bcfw"), "algorithms[0].algo"},
		{"unknown algorithm", fakeSpec(10, nil, "fw", "zigzag"), "algorithms[1].algo"},
		{"instance rejects m0", func() spec.Run {
			sp := fakeSpec(10, nil, "fw", "ssfw-as")
			sp.Algorithms[1].Schedule, sp.Algorithms[1].M0 = "constant", 11
			return sp
		}(), "algorithms[1].m0"},
		{"too many records", func() spec.Run {
			sp := fakeSpec(10, nil, "fw", "afw")
			sp.Iters, sp.Replications = 100_000, 6
			return sp
		}(), "iters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.Create(context.Background(), c.sp)
			var fe *spec.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a field error", err, err)
			}
			if fe.Field != c.field || fe.Msg == "" {
				t.Errorf("field %q (%s), want %q", fe.Field, fe.Msg, c.field)
			}
		})
	}
	if n := len(m.List()); n != 0 {
		t.Errorf("%d runs stored after failed creations", n)
	}
}

func TestPanicFailsOnlyItsTrace(t *testing.T) {
	m := newManager(t, session.Options{})
	sp := fakeSpec(500, spec.Params{"panic_at": "200"}, "fw")
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	ts := r.Status().Traces[0]
	if ts.Status != solver.StatusFailed || ts.Summary == nil || !strings.Contains(ts.Summary.Message, "boom at k = 200") {
		t.Fatalf("trace status %+v", ts)
	}
	if ts.Records != 200 || ts.Summary.Iters != 199 {
		t.Errorf("records %d, iters %d; want 200 records (k = 0…199)", ts.Records, ts.Summary.Iters)
	}
	if r.RunStatus() != session.StatusFailed {
		t.Errorf("run status %q, want failed", r.RunStatus())
	}
	// A method error is a failed trace too, with the records kept.
	r2, err := m.Create(context.Background(), fakeSpec(50, spec.Params{"fail": "diverged"}, "fw", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r2)
	for _, ts := range r2.Status().Traces {
		if ts.Status != solver.StatusFailed || ts.Summary.Message != "diverged" || ts.Records != 51 {
			t.Errorf("trace %+v", ts)
		}
	}
}

func TestPauseStepResume(t *testing.T) {
	m := newManager(t, session.Options{})
	sp := fakeSpec(3000, spec.Params{"delay_us": "50"}, "fw", "afw")
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "first records", func() bool { return r.Traces()[0].Len() > 10 && r.Traces()[1].Len() > 10 })
	r.Pause()
	if s := r.RunStatus(); s != session.StatusPaused {
		t.Fatalf("status %q after pause", s)
	}
	waitFor(t, "traces parked", r.Parked)
	counts := func() []int {
		var c []int
		for _, tr := range r.Traces() {
			c = append(c, tr.Len())
		}
		return c
	}
	before := counts()
	time.Sleep(30 * time.Millisecond)
	if got := counts(); !equal(got, before) {
		t.Fatalf("records arrived while paused: %v → %v", before, got)
	}
	for step := 1; step <= 3; step++ {
		r.Step()
		waitFor(t, "step", func() bool { return r.Parked() && equal(counts(), add(before, step)) })
	}
	time.Sleep(20 * time.Millisecond)
	if got := counts(); !equal(got, add(before, 3)) {
		t.Fatalf("after 3 steps: %v, want %v", got, add(before, 3))
	}
	time.Sleep(time.Second)
	r.Resume()
	if s := r.RunStatus(); s != session.StatusRunning {
		t.Fatalf("status %q after resume", s)
	}
	waitDone(t, r)
	for i, tr := range r.Traces() {
		recs := tr.Records(0, tr.Len())
		if len(recs) != 3001 || recs[len(recs)-1].K != 3000 {
			t.Fatalf("trace %d: %d records", tr.Index, len(recs))
		}
		// Time is net of the pause and the steps' waits: it does not jump
		// by the second spent paused.
		for j := before[i]; j <= before[i]+3; j++ {
			if dt := recs[j].Time - recs[j-1].Time; dt > 0.5 {
				t.Errorf("trace %d: time jumps by %.3fs at record %d although the pause is excluded", tr.Index, dt, j)
			}
		}
	}
	if r.RunStatus() != session.StatusDone {
		t.Errorf("status %q", r.RunStatus())
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func add(a []int, d int) []int {
	out := make([]int, len(a))
	for i := range a {
		out[i] = a[i] + d
	}
	return out
}

func TestCancelWinsOverPause(t *testing.T) {
	m := newManager(t, session.Options{})
	r, err := m.Create(context.Background(), fakeSpec(1_000_000, spec.Params{"delay_us": "100"}, "fw", "fista"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "records", func() bool { return r.Traces()[1].Len() > 5 })
	r.Pause()
	waitFor(t, "parked", r.Parked)
	r.Cancel()
	if s := r.RunStatus(); s != session.StatusCancelled {
		t.Errorf("status %q right after cancel", s)
	}
	waitDone(t, r)
	for _, ts := range r.Status().Traces {
		if ts.Status != solver.StatusCancelled {
			t.Errorf("trace %+v", ts)
		}
	}
}

func TestWorkerSlotsBoundExecution(t *testing.T) {
	m := newManager(t, session.Options{Workers: 1, TimeSlice: time.Millisecond})
	sessiontest.ResetConcurrency()
	sp := fakeSpec(30_000, nil, "fw", "afw", "fista")
	sp.Replications = 2
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	// Time slicing: every trace starts well before the first one finishes.
	waitFor(t, "every trace started", func() bool {
		for _, tr := range r.Traces() {
			if tr.Len() == 0 {
				return false
			}
		}
		return true
	})
	if r.Finished() {
		t.Log("run finished before every trace was seen starting; slicing not observed")
	}
	waitDone(t, r)
	if got := sessiontest.MaxConcurrency(); got != 1 {
		t.Errorf("%d methods computed at once with one worker slot", got)
	}
	for _, ts := range r.Status().Traces {
		if ts.Records != 30_001 {
			t.Errorf("trace %+v", ts)
		}
	}
}

func TestActiveAndStoredLimits(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 1, MaxStored: 2})
	slow, err := m.Create(context.Background(), fakeSpec(1_000_000, spec.Params{"delay_us": "100"}, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	// A second run waits in the queue until the first one ends.
	queued, err := m.Create(context.Background(), fakeSpec(10, nil, "fw"))
	if err != nil {
		t.Fatalf("second run: %v, want it queued", err)
	}
	if st := queued.Status(); st.Status != session.StatusQueued || st.QueuePosition != 1 || st.Records != 0 {
		t.Fatalf("second run %s at %d with %d records, want queued at 1 with none", st.Status, st.QueuePosition, st.Records)
	}
	slow.Cancel()
	waitDone(t, slow)
	waitDone(t, queued)
	if st := queued.Status(); st.Status != session.StatusDone || st.Records != 11 {
		t.Fatalf("queued run ended %s with %d records, want done with 11", st.Status, st.Records)
	}
	var ids []string
	for i := 0; i < 2; i++ {
		r, err := m.Create(context.Background(), fakeSpec(10, nil, "fw"))
		if err != nil {
			t.Fatal(err)
		}
		waitDone(t, r)
		ids = append(ids, r.ID)
	}
	if _, ok := m.Get(slow.ID); ok || !m.Evicted(slow.ID) {
		t.Errorf("oldest finished run %s not evicted", slow.ID)
	}
	if m.Evicted("r99") || m.Evicted("x") || m.Evicted(ids[1]) {
		t.Error("Evicted reports runs that never existed or are stored")
	}
	list := m.List()
	if len(list) != 2 || list[0].ID != ids[0] || list[1].ID != ids[1] {
		t.Errorf("list %+v, want %v", list, ids)
	}
}

func TestDataPathsStayInDataDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, session.Options{DataDir: dir})
	r, err := m.Create(context.Background(), fakeSpec(5, spec.Params{"data": "a.csv"}, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "a.csv")
	if real, err := filepath.EvalSymlinks(want); err == nil {
		want = real
	}
	if got := r.Info().Panels["data"]; got != want {
		t.Errorf("data path resolved to %v", got)
	}
	if r.Spec().Params["data"] != "a.csv" {
		t.Errorf("the spec keeps the user's text, got %q", r.Spec().Params["data"])
	}
	for _, bad := range []string{"../a.csv", "/etc/passwd", "x/../../a.csv"} {
		_, err := m.Create(context.Background(), fakeSpec(5, spec.Params{"data": bad}, "fw"))
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != "params.data" {
			t.Errorf("%q: %v, want a params.data error", bad, err)
		}
	}
}

func TestStepOnRunningRunPauses(t *testing.T) {
	m := newManager(t, session.Options{})
	r, err := m.Create(context.Background(), fakeSpec(100_000, spec.Params{"delay_us": "100"}, "fw", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "records", func() bool { return r.Traces()[1].Len() > 5 })
	r.Step() // the traces are running: they stop at their next record
	if s := r.RunStatus(); s != session.StatusPaused {
		t.Fatalf("status %q after a step on a running run", s)
	}
	waitFor(t, "parked", r.Parked)
	before := []int{r.Traces()[0].Len(), r.Traces()[1].Len()}
	r.Step()
	r.Step() // requested while the first step is under way: they add up
	waitFor(t, "two steps", func() bool {
		return r.Parked() && r.Traces()[0].Len() == before[0]+2 && r.Traces()[1].Len() == before[1]+2
	})
	time.Sleep(30 * time.Millisecond)
	if a, b := r.Traces()[0].Len(), r.Traces()[1].Len(); a != before[0]+2 || b != before[1]+2 {
		t.Errorf("after two steps: %d %d, want %d %d", a, b, before[0]+2, before[1]+2)
	}
	r.Cancel()
	waitDone(t, r)
}

func TestTotalRecordsBudget(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 3, MaxRecords: 2001, MaxTotalRecords: 2501})
	first, err := m.Create(context.Background(), fakeSpec(399, nil, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, first)
	slow, err := m.Create(context.Background(), fakeSpec(2000, spec.Params{"delay_us": "2000"}, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	// 2001 (active budget) + 1000 > 2501 even without the finished run.
	if _, err := m.Create(context.Background(), fakeSpec(999, nil, "fw")); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("over the total budget: %v, want ErrBusy", err)
	}
	if _, ok := m.Get(first.ID); !ok {
		t.Error("a refused run evicted a finished one")
	}
	// 2001 + 400 (finished) + 300 > 2501: the finished run makes room.
	small, err := m.Create(context.Background(), fakeSpec(299, nil, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get(first.ID); ok || !m.Evicted(first.ID) {
		t.Error("the finished run was not evicted to make room")
	}
	waitDone(t, small)
	slow.Cancel()
	waitDone(t, slow)
}

// A block method's worker pool takes one slot per worker: two traces with
// two workers each never compute at once on a two-slot manager, beside a
// single-slot trace, and a pool larger than the server's slots is refused
// by name.
func TestWorkerPoolsTakeSlots(t *testing.T) {
	m := newManager(t, session.Options{Workers: 2, TimeSlice: time.Millisecond})
	sessiontest.ResetConcurrency()
	sp := fakeSpec(20_000, spec.Params{"blocks": "4"}, "fw", "afw", "fista")
	sp.Algorithms[0].Workers = 2
	sp.Algorithms[1].Workers = 2
	sp.Replications = 2
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	if got := sessiontest.MaxConcurrency(); got != 2 {
		t.Errorf("%d goroutines computed at once with two worker slots, want 2", got)
	}
	for _, ts := range r.Status().Traces {
		if ts.Records != 20_001 {
			t.Errorf("trace %+v", ts)
		}
	}
	if got := r.Spec().Algorithms[2].Workers; got != 0 {
		t.Errorf("the stored spec changed: workers %d", got)
	}

	// Without the session's accounting the default pool (one goroutine
	// per CPU) would run beside the others: the session gives it one slot.
	sessiontest.ResetConcurrency()
	one := newManager(t, session.Options{Workers: 1, TimeSlice: time.Millisecond})
	r, err = one.Create(context.Background(), fakeSpec(5_000, spec.Params{"blocks": "4"}, "fw", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	if got := sessiontest.MaxConcurrency(); got != 1 {
		t.Errorf("%d goroutines computed at once with one worker slot", got)
	}

	sp = fakeSpec(10, spec.Params{"blocks": "4"}, "fw", "afw")
	sp.Algorithms[1].Workers = 3
	_, err = m.Create(context.Background(), sp)
	var fe *spec.FieldError
	if !errors.As(err, &fe) || fe.Field != "algorithms[1].workers" || !strings.Contains(fe.Msg, "at most the server's 2 worker slots") {
		t.Fatalf("workers above the slots: %v", err)
	}
}

// Pause, single steps, resume and cancel with traces holding two slots each
// beside a one-slot trace: every trace parks, steps one record at a time and
// finishes, and a cancelled run leaves no slot taken.
func TestPauseStepWithWorkerPools(t *testing.T) {
	m := newManager(t, session.Options{Workers: 2, TimeSlice: time.Millisecond})
	sp := fakeSpec(1000, spec.Params{"delay_us": "20", "blocks": "4"}, "fw", "afw", "fista")
	sp.Algorithms[0].Workers = 2
	sp.Algorithms[1].Workers = 2
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "first records", func() bool {
		for _, tr := range r.Traces() {
			if tr.Len() < 5 {
				return false
			}
		}
		return true
	})
	r.Pause()
	waitFor(t, "traces parked", r.Parked)
	var before []int
	for _, tr := range r.Traces() {
		before = append(before, tr.Len())
	}
	for step := 1; step <= 3; step++ {
		r.Step()
		waitFor(t, "step", func() bool {
			var c []int
			for _, tr := range r.Traces() {
				c = append(c, tr.Len())
			}
			return r.Parked() && equal(c, add(before, step))
		})
	}
	r.Resume()
	waitDone(t, r)
	for _, ts := range r.Status().Traces {
		if ts.Records != 1001 {
			t.Errorf("trace %+v", ts)
		}
	}
	// A cancelled run gives every slot back: a one-slot run and a two-slot
	// run both finish afterwards.
	c, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "records", func() bool { return c.Traces()[0].Len() > 3 })
	c.Cancel()
	waitDone(t, c)
	after := fakeSpec(50, spec.Params{"blocks": "4"}, "fw", "afw")
	after.Algorithms[0].Workers = 2
	d, err := m.Create(context.Background(), after)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, d)
}
