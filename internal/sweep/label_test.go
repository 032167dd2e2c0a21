package sweep_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/sweep"
)

func TestLabelsInWords(t *testing.T) {
	b := &spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fw"}, {Algo: "fw"}}}
	for _, tc := range []struct{ path, want string }{
		{"algorithms[0].rho", "ρ of ssfw-as"},
		{"algorithms[0].L", "L of ssfw-as"},
		{"algorithms[0].stepsize", "stepsize of ssfw-as"},
		{"algorithms[1].alpha", "α of fw #2"},
		{"algorithms[2].caratheodory", "Carathéodory bound of fw #3"},
		{"algorithms[7].rho", "ρ of algorithm 8"},
		{"params.n", "problem's n"},
		{"seed", "seed"},
		{"eval_every", "evaluation interval"},
		{"algorithms[1].path", "λ-path stages of fw #2"},
		{"whatever", "whatever"},
	} {
		if got := sweep.Label(tc.path, b); got != tc.want {
			t.Errorf("Label(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// Strings and booleans are axes like numbers: L over "auto" and 2 (a
// number taken as the text "2"), caratheodory over true and false, the
// algorithm itself over names.
func TestStringAndBooleanAxes(t *testing.T) {
	d, err := sweep.Decode(strings.NewReader(`{"base":` + base + `,"axes":[{"param":"algorithms[0].L","values":["auto",2]},{"param":"algorithms[1].caratheodory","values":[true,false]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := d.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || cells[0].Spec.Algorithms[0].L != "auto" || cells[2].Spec.Algorithms[0].L != "2" ||
		!cells[0].Spec.Algorithms[1].Caratheodory || cells[1].Spec.Algorithms[1].Caratheodory {
		t.Fatalf("cells %+v", cells)
	}
	if got := string(cells[2].ValuesJSON(d.Axes)); got != `{"algorithms[0].L":2,"algorithms[1].caratheodory":true}` {
		t.Errorf("values %s", got)
	}
	d, err = sweep.Decode(strings.NewReader(`{"base":` + base + `,"axes":[{"param":"algorithms[0].algo","values":["fw","afw"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if cells, err := d.Cells(); err != nil || cells[1].Spec.Algorithms[0].Algo != "afw" {
		t.Errorf("an algorithm axis: %v %v", cells, err)
	}
}

// A check (the server's per-run limits) names the axis value that breaks
// it alone, else the combination.
func TestCellsCheckedNamesTheValue(t *testing.T) {
	check := func(sp spec.Run) error {
		if sp.Iters*sp.Replications > 1000 {
			return spec.Errorf("iters", "(iters) × replications must be at most 1000")
		}
		return nil
	}
	for _, tc := range []struct{ axes, field, has string }{
		{`[{"param":"iters","values":[10, 5000]}]`, "axes[0].values[1]", "iters = 5000"},
		{`[{"param":"iters","values":[10, 400]},{"param":"replications","values":[1, 3]}]`, "axes[1].values[1]", "iters = 400, replications = 3"},
	} {
		d, err := sweep.Decode(strings.NewReader(`{"base":` + base + `,"axes":` + tc.axes + `}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.CellsChecked(check)
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.has) || !strings.Contains(fe.Msg, "at most 1000") {
			t.Errorf("%s: %v, want %s naming %q", tc.axes, err, tc.field, tc.has)
		}
	}
}
