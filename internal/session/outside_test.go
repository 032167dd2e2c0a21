package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func outsideSpec(traces ...string) spec.Run {
	sp := spec.Run{Problem: "my problem", Outside: true, Iters: 20}
	for _, t := range traces {
		sp.Algorithms = append(sp.Algorithms, spec.Algo{Algo: t})
	}
	return sp
}

// A run opened from outside on a manager without a store: it runs at once
// without a run slot (a catalogue run still gets one), counts against the
// client's runs, takes only its token, keeps its batches whole, and ends
// with the client's status, its summary from its last records.
func TestOutsideRunInMemory(t *testing.T) {
	m := session.NewManager(session.Options{MaxActive: 1, MaxClientRuns: 2})
	defer m.Close(context.Background())
	tok := session.HashToken("secret")
	r, err := m.OpenOutside(context.Background(), outsideSpec("pgd", "fw"), nil, "c1", tok)
	if err != nil {
		t.Fatal(err)
	}
	if r.RunStatus() != session.StatusRunning || !r.Outside() || !r.TokenMatches("secret") || r.TokenMatches("secreT") || r.TokenMatches("") {
		t.Fatalf("opened: %s, outside %v", r.RunStatus(), r.Outside())
	}
	if _, err := m.OpenOutside(context.Background(), outsideSpec("a"), nil, "c1", tok); err != nil {
		t.Fatal(err)
	}
	if _, err := m.OpenOutside(context.Background(), outsideSpec("a"), nil, "c1", tok); !errors.Is(err, session.ErrBusy) {
		t.Errorf("a third run of the client: %v, want ErrBusy", err)
	}
	// the one run slot is free for a catalogue run
	cat, err := m.Create(context.Background(), fakeSpec(30, nil, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-cat.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("the catalogue run did not run beside the outside runs: %s", cat.RunStatus())
	}
	obj := func(v float64) *float64 { return &v }
	good := []session.OutsideRecord{{0, solver.Record{K: 0, Step: "none", Objective: obj(4)}}, {1, solver.Record{K: 0, Step: "none"}},
		{0, solver.Record{K: 2, Passes: 2, Step: "pgd", Objective: obj(1), Gap: obj(0.5)}}}
	if err := r.AppendOutside("records", good); err != nil {
		t.Fatal(err)
	}
	bad := []session.OutsideRecord{{1, solver.Record{K: 5, Step: "fw"}}, {0, solver.Record{K: 2, Step: "pgd"}}}
	var fe *spec.FieldError
	if err := r.AppendOutside("records", bad); !errors.As(err, &fe) || fe.Field != "records[1].k" {
		t.Fatalf("a batch with k repeated: %v", err)
	}
	if r.Traces()[0].Len() != 2 || r.Traces()[1].Len() != 1 {
		t.Fatalf("records after a refused batch: %d, %d", r.Traces()[0].Len(), r.Traces()[1].Len())
	}
	if err := r.Step(); !errors.Is(err, session.ErrNotPausable) {
		t.Errorf("Step: %v", err)
	}
	r.Pause()
	if r.RunStatus() != session.StatusRunning {
		t.Errorf("after Pause: %s", r.RunStatus())
	}
	if err := r.EndOutside("converged", "done here"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not done")
	}
	st := r.Status()
	if st.Status != session.StatusDone || st.Traces[0].Summary.Iters != 2 || st.Traces[0].Summary.Objective != 1 || st.Traces[0].Summary.Gap != 0.5 ||
		st.Traces[1].Summary.Status != "converged" || st.Traces[1].Summary.Message != "done here" {
		t.Errorf("ended: %+v", st)
	}
	if err := r.AppendOutside("records", good[:1]); !errors.Is(err, session.ErrEnded) {
		t.Errorf("a batch after the end: %v", err)
	}
	if err := r.EndOutside("converged", ""); !errors.Is(err, session.ErrEnded) {
		t.Errorf("a second end: %v", err)
	}
}
