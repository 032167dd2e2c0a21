package figures_test

import (
	"fmt"
	"math"
	"os"

	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/solver"
)

// A server draws a run's figure from its traces: one RunTraces per
// algorithm with its replications, F* when known (else NaN: the objective
// panels then draw F − the best F reached), and the instance's matrices as
// heat maps.
func ExampleFromRun() {
	obj := func(v float64) *float64 { return &v }
	traces := []figures.RunTraces{{Algo: "afw", Traces: [][]solver.Record{
		{{K: 0, Objective: obj(4), Gap: obj(3)}, {K: 1, Passes: 1, Objective: obj(2), Gap: obj(1)}},
		{{K: 0, Objective: obj(4), Gap: obj(3)}, {K: 1, Passes: 1, Objective: obj(3), Gap: obj(2)}},
	}}}
	panels := map[string]any{"B_true": [][]float64{{1, 0}, {0, -1}}}
	fig := figures.FromRun("lasso, seed 0", traces, math.NaN(), figures.HeatPanels(panels)...)
	format, err := figures.FormatOf("run.svg")
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.CreateTemp("", "run-*.svg")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := fig.Render(f, format); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(fig.Panels), "panels;", fig.Panels[0].Lines.YLabel, "at iteration 1:", fig.Panels[0].Lines.Series[0].Y[1])
	// Output: 4 panels; F − best F seen at iteration 1: 0.5
}
