package scenarios

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Every algorithm of the table (spec.Algorithms) is offered by some
// problem; a problem offers exactly the table's algorithms of its group
// (TestScenarioDefaultsRun runs each of them on it), and refuses every other
// from the spec with an error naming the field and the algorithms it takes.
func TestAlgorithmTableDispatch(t *testing.T) {
	claimed := map[string]bool{}
	for _, s := range All() {
		for _, name := range s.Algorithms {
			if spec.AlgorithmByName(name) == nil {
				t.Errorf("%s offers %s, which is not in the table", s.Name, name)
			}
			claimed[name] = true
		}
		for _, a := range spec.Algorithms {
			if slices.Contains(s.Algorithms, a.Name) {
				continue
			}
			r := spec.Run{Problem: s.Name, Algorithms: []spec.Algo{{Algo: a.Name}}, Iters: 2}
			_, _, err := Resolve(&r)
			fe, ok := err.(*spec.FieldError)
			if !ok || fe.Field != "algorithms[0].algo" || !strings.Contains(err.Error(), a.Name+" does not apply to problem "+s.Name) || !strings.Contains(err.Error(), strings.Join(s.Algorithms, ", ")) {
				t.Errorf("%s on %s: error %v, want a refusal naming algorithms[0].algo and the problem's algorithms", a.Name, s.Name, err)
			}
		}
	}
	for _, a := range spec.Algorithms {
		if !claimed[a.Name] {
			t.Errorf("%s is in the table but no problem offers it", a.Name)
		}
	}
}

// The solver's constructor and its slack collapse agree with the table: it
// builds exactly the family "fw", and reshapes exactly the algorithms the
// table says run the slack collapse.
func TestAlgorithmTableMatchesSolver(t *testing.T) {
	r := spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "afw"}}, Iters: 2}
	sc, v, err := Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sc.Build(context.Background(), v, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := inst.(*FWInstance).Problem
	for _, a := range spec.Algorithms {
		sa := spec.Algo{Algo: a.Name}
		if err := sa.Normalize(""); err != nil {
			t.Fatal(err)
		}
		_, err := solver.New(p, Config(sa, LimitsOf(&r), 1))
		unknown := err != nil && strings.Contains(err.Error(), "unknown Frank-Wolfe algorithm")
		if unknown != (a.Family != "fw") {
			t.Errorf("%s (family %s): solver.New says %v", a.Name, a.Family, err)
		}
		if solver.UsesReshape(a.Name) != a.Reshape {
			t.Errorf("%s: the table says slack collapse %v, the solver %v", a.Name, a.Reshape, solver.UsesReshape(a.Name))
		}
	}
}
