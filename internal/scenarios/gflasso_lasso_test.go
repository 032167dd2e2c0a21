package scenarios

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/problems/gflasso"
	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/solver"
)

// TestGFLASSOWithoutFusionIsLassoPerTask: with γ = 0 the GFLASSO objective is
// Σ_k ½‖y_k − Xβ_k‖² + λ‖β_k‖₁, so each task is the lasso problem on its own
// column of Y. The two problems are solved by different code (component
// oracles on B against the l1-epigraph oracle of package glm) and must agree
// task by task, in objective and in coefficients.
func TestGFLASSOWithoutFusionIsLassoPerTask(t *testing.T) {
	sp := gflasso.DefaultSim(5)
	sp.N, sp.J, sp.K = 80, 12, 6
	sim, err := gflasso.Simulate(sp)
	if err != nil {
		t.Fatal(err)
	}
	const lambda = 5.0
	gp, err := gflasso.New(sim.X, sim.Y, gflasso.Options{Lambda: lambda, Gamma: 0, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	run := func(p solver.Problem, algo string) solver.Result {
		sch := solver.Schedule{Kind: "full"}
		if algo == "bc-ssfw-as" {
			sch = solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}
		}
		m, err := solver.New(p, solver.Config{Algorithm: algo, Schedule: sch, Limits: solver.Limits{MaxIters: 200000, EvalEvery: 10, GapTol: 1e-11}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
		if err != nil || res.Summary.Status != solver.StatusConverged {
			t.Fatalf("%s: %v %+v", algo, err, res.Summary)
		}
		return res
	}
	gres := run(gp, "bc-ssfw-as")
	B := gp.BOf(gres.X)
	n, k := sim.Y.Dims()
	total := 0.0
	for task := 0; task < k; task++ {
		y := mat.Col(nil, task, sim.Y)
		lp, err := glm.New(glm.Config{Loss: glm.Squared, X: sim.X, Y: y, Lambda: lambda})
		if err != nil {
			t.Fatal(err)
		}
		lres := run(lp, "afw")
		total += lres.Summary.Objective
		// the task's share of the GFLASSO objective at B.
		share := lambda * l1Col(B, task)
		for i := 0; i < n; i++ {
			r := y[i] - mat.Dot(sim.X.RowView(i), B.ColView(task))
			share += 0.5 * r * r
		}
		if math.Abs(share-lres.Summary.Objective) > 1e-8*math.Abs(lres.Summary.Objective) {
			t.Errorf("task %d: GFLASSO share %.12g, lasso %.12g", task, share, lres.Summary.Objective)
		}
		for j := 0; j < lp.P(); j++ {
			if d := math.Abs(B.At(j, task) - lres.X[j]); d > 1e-4 {
				t.Errorf("task %d, row %d: B = %.8g, lasso β = %.8g", task, j, B.At(j, task), lres.X[j])
			}
		}
	}
	if math.Abs(total-gres.Summary.Objective) > 1e-8*total {
		t.Errorf("GFLASSO objective %.12g, sum of the task lassos %.12g", gres.Summary.Objective, total)
	}
	t.Logf("γ = 0: GFLASSO %.12g, Σ lasso %.12g over %d tasks", gres.Summary.Objective, total, k)
}

func l1Col(B *mat.Dense, c int) float64 {
	r, _ := B.Dims()
	s := 0.0
	for i := 0; i < r; i++ {
		s += math.Abs(B.At(i, c))
	}
	return s
}
