package ssvm_test

import (
	"context"
	"fmt"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// Train a structural SVM on a small synthetic chain data set with the
// away-step method and read the certified duality gap.
func Example() {
	cfg := ssvm.DefaultChain
	cfg.Train, cfg.Test = 20, 10
	train, test, err := ssvm.Chain(cfg)
	if err != nil {
		panic(err)
	}
	p, err := ssvm.NewProblem(train, test, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println("blocks:", p.N(), "dimension:", p.D)
	m, err := p.NewMethod(ssvm.Options{Algo: ssvm.AlgoBCFWAS,
		Schedule: solver.Schedule{Kind: "full"},
		Limits:   solver.Limits{MaxIters: 100000, GapTol: 1e-6, EvalEvery: 20}, Seed: 1})
	if err != nil {
		panic(err)
	}
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Summary.Status, res.Summary.Gap <= 1e-6)
	// Output:
	// blocks: 20 dimension: 80
	// converged true
}
