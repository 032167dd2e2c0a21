package figures_test

import (
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/figures/figtest"
	"github.com/fwlab/fwlab/internal/solver"
)

// A run's figure reads cleanly at every size: the x-axis of passes runs
// to 1 750, F* is unknown (F − best F seen over 13 decades), three
// algorithms with bands and a heat map of a matrix.
func TestRunFigureReadable(t *testing.T) {
	var algos []figures.RunTraces
	for a, name := range []string{"ssfw-as", "fw", "bc-ssfw-as + slack collapse"} {
		var reps [][]solver.Record
		for r := 0; r < 3; r++ {
			n := 400 + 300*a
			var tr []solver.Record
			for k := 0; k <= n; k++ {
				obj := 3473 + 1e3*math.Pow(10, -13*float64(k)/float64(n))*(1+0.1*float64(r)) + float64(a)*1e-3
				gap := 50 * math.Exp(-float64(k)/40)
				tr = append(tr, solver.Record{K: k, Passes: 1750 * float64(k) / 1000, Objective: &obj, Gap: &gap})
			}
			reps = append(reps, tr)
		}
		algos = append(algos, figures.RunTraces{Algo: name, Traces: reps})
	}
	z := make([][]float64, 50)
	for i := range z {
		z[i] = make([]float64, 20)
		for j := range z[i] {
			z[i][j] = math.Sin(float64(i*j)) * 2.5e-5
		}
	}
	fig := figures.FromRun("gflasso, run 3f2a (N = 200, J = 50, K = 20): seed 7, median and min–max of 3 replications", algos, math.NaN(),
		figures.Panel{Title: "true B", Heat: &figures.Heat{Z: z}})
	figtest.Check(t, "run", fig)
}
