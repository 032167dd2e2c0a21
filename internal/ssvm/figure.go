package ssvm

import (
	"context"
	"fmt"
	"math"

	"github.com/fwlab/fwlab/internal/solver"
)

// Figure2Options configures the reproduction of the paper's Figure 2.
type Figure2Options struct {
	Data        string    // OCR data file or directory ("" resolves as ResolveOCR)
	Split       string    // "train" (default: folds 1–9, n = 6251) or "small"
	Lambdas     []float64 // default 0.05, 0.01, 0.001
	Algos       []string  // default bcfw-as, bcfw
	Passes      float64   // effective passes per run (default 20)
	EvalPerPass int       // evaluations per pass (default 2; one costs about two passes on OCR)
	EvalEvery   int       // evaluate every so many iterations instead (0: from EvalPerPass)
	Seed        int64
	NoAverage   bool // report the plain iterates instead of the weighted averages
}

// Figure2Series is one curve: an algorithm at one λ.
type Figure2Series struct {
	Algo   string    `json:"algo"`
	Lambda float64   `json:"lambda"`
	Passes []float64 `json:"passes"`
	Gap    []float64 `json:"gap"`
	// GapPlain is the duality gap of the plain iterate (equal to Gap
	// without averaging).
	GapPlain []float64      `json:"gap_plain"`
	RelGap   []float64      `json:"rel_gap"`
	Primal   []float64      `json:"primal"`
	Dual     []float64      `json:"dual"`
	TestErr  []float64      `json:"test_err"`
	Seconds  float64        `json:"seconds"`
	Summary  solver.Summary `json:"summary"`
}

// Figure2Data is the JSON-encodable result: duality gap and relative gap
// (gap / primal) against effective passes, for every algorithm and λ.
type Figure2Data struct {
	Title    string          `json:"title"`
	Data     string          `json:"data"`
	N        int             `json:"n"`
	D        int             `json:"d"`
	Averaged bool            `json:"averaged"`
	Series   []Figure2Series `json:"series"`
}

// Figure2 runs every (λ, algorithm) pair for the given passes on the OCR data
// and collects the evaluated records. With the defaults (3 λ × 2 algorithms ×
// 20 passes, 2 evaluations per pass) it takes about five minutes on two
// cores; the runs are sequential so that their seconds are comparable.
func Figure2(ctx context.Context, o Figure2Options) (*Figure2Data, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	c, err := LoadOCR(o.Data)
	if err != nil {
		return nil, err
	}
	train, test, err := c.Split(o.Split)
	if err != nil {
		return nil, err
	}
	out := &Figure2Data{Title: "Structural SVM on OCR: duality gap against effective passes (paper Figure 2)",
		Data: c.Data.Name, N: len(train.Words), D: train.Dim(), Averaged: !o.NoAverage}
	for _, lam := range o.Lambdas {
		p, err := NewProblem(train, test, lam)
		if err != nil {
			return nil, err
		}
		n := p.N()
		every := max(1, n/o.EvalPerPass)
		if o.EvalEvery > 0 {
			every = o.EvalEvery
		}
		for _, algo := range o.Algos {
			s, err := o.series(ctx, p, algo, lam, every)
			if err != nil {
				return nil, err
			}
			out.Series = append(out.Series, s)
		}
	}
	return out, nil
}

// defaults fills in the options left zero (the paper's λs, both block
// methods, 20 passes, 2 evaluations per pass) and checks the rest.
func (o *Figure2Options) defaults() error {
	if len(o.Lambdas) == 0 {
		o.Lambdas = []float64{0.05, 0.01, 0.001}
	}
	if len(o.Algos) == 0 {
		o.Algos = []string{AlgoBCFWAS, AlgoBCFW}
	}
	if o.Passes == 0 {
		o.Passes = 20
	}
	if !(o.Passes > 0) || math.IsInf(o.Passes, 0) || o.Passes > 1000 {
		return fmt.Errorf("passes: must be a number in (0, 1000], got %v", o.Passes)
	}
	if o.EvalPerPass == 0 {
		o.EvalPerPass = 2
	}
	if o.EvalPerPass < 1 {
		return fmt.Errorf("eval per pass: must be at least 1, got %d", o.EvalPerPass)
	}
	if o.EvalEvery < 0 {
		return fmt.Errorf("eval every: must be at least 1 (or 0 for eval per pass), got %d", o.EvalEvery)
	}
	return nil
}

// series runs algo on p (λ = lam) evaluated every every iterations, and
// collects its evaluated records.
func (o *Figure2Options) series(ctx context.Context, p *Problem, algo string, lam float64, every int) (Figure2Series, error) {
	n := p.N()
	m, err := p.NewMethod(Options{Algo: algo, Average: !o.NoAverage,
		Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5},
		Limits: solver.Limits{MaxIters: int(math.Ceil(o.Passes * float64(n))), MaxPasses: o.Passes,
			EvalEvery: every},
		Seed: o.Seed})
	if err != nil {
		return Figure2Series{}, err
	}
	s := Figure2Series{Algo: algo, Lambda: lam}
	res, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
		if !r.Evaluated() || r.Gap == nil {
			return
		}
		s.Passes = append(s.Passes, r.Passes)
		s.Gap = append(s.Gap, *r.Gap)
		s.GapPlain = append(s.GapPlain, r.Extra["gap_plain"])
		s.RelGap = append(s.RelGap, r.Extra["rel_gap"])
		s.Primal = append(s.Primal, *r.Objective)
		s.Dual = append(s.Dual, r.Extra["dual"])
		te := r.Extra["test_err"]
		if !o.NoAverage {
			te = r.Extra["test_err_avg"]
		}
		s.TestErr = append(s.TestErr, te)
	}))
	if err != nil {
		return Figure2Series{}, fmt.Errorf("%s at λ=%v: %w", algo, lam, err)
	}
	if res.Summary.Status == solver.StatusCancelled {
		return Figure2Series{}, ctx.Err()
	}
	s.Seconds = res.Summary.Time
	s.Summary = res.Summary
	return s, nil
}
