package scenarios

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// cd's setting path reaches the solver from a run spec (the run goes along
// its λ path, as its message says), and on a problem without a penalty λ
// it is refused with a field error naming the algorithm's path.
func TestCDPathFromSpec(t *testing.T) {
	jobs := func(r spec.Run) ([]Job, error) {
		t.Helper()
		inst, rr := buildRun(t, r)
		return Jobs(inst, rr)
	}
	js, err := jobs(spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "fista"}, {Algo: "cd", Path: 4}}, Iters: 100000})
	if err != nil {
		t.Fatal(err)
	}
	res, err := js[1].Method.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Status != solver.StatusConverged || !strings.Contains(s.Message, "after 4 continuation stages") {
		t.Errorf("cd with path 4 ended %s: %q, want converged after 4 continuation stages", s.Status, s.Message)
	}
	for _, p := range []string{"box", "svm-dual"} {
		_, err := jobs(spec.Run{Problem: p, Algorithms: []spec.Algo{{Algo: "fista"}, {Algo: "cd", Path: 3}}})
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != "algorithms[1].path" || !strings.Contains(fe.Msg, "has no λ") {
			t.Errorf("%s with path 3: error %v, want a field error on algorithms[1].path saying it has no λ", p, err)
		}
	}
}
