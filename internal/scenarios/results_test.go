package scenarios

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// runAll runs a method to its end, keeping every record.
func runAll(t *testing.T, m solver.Method) ([]solver.Record, solver.Result) {
	t.Helper()
	var recs []solver.Record
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
	if err != nil {
		t.Fatal(err)
	}
	return recs, res
}

func TestGFLASSOResultPanels(t *testing.T) {
	inst, err := buildGFLASSO(t, spec.Params{"n": "30", "j": "6", "k": "4", "group": "2"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	a := spec.Algo{Algo: "spg"}
	if err := a.Normalize(""); err != nil {
		t.Fatal(err)
	}
	m, err := inst.Method(a, solver.Limits{MaxIters: 50, EvalEvery: 10}, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, res := runAll(t, m)
	var rp ResultPanels = inst
	panels, err := rp.ResultPanels(res.X)
	if err != nil {
		t.Fatal(err)
	}
	B, ok := panels["B"].([][]float64)
	if !ok {
		t.Fatalf("panel B is %T, want [][]float64", panels["B"])
	}
	if !reflect.DeepEqual(B, inst.CoefMatrix(res.X)) {
		t.Fatal("panel B differs from CoefMatrix")
	}
	if len(B) != 6 || len(B[0]) != 4 {
		t.Fatalf("B is %d×%d, want 6×4 (J×K)", len(B), len(B[0]))
	}
	// The panel has the true B's shape, so both draw side by side.
	bt := inst.Info().Panels["B_true"].([][]float64)
	if len(bt) != len(B) || len(bt[0]) != len(B[0]) {
		t.Fatalf("B_true is %d×%d, B is %d×%d", len(bt), len(bt[0]), len(B), len(B[0]))
	}
	// Unit test of the layout: x = e_i puts a single nonzero into B.
	for i := 0; i < len(res.X); i++ {
		x := make([]float64, len(res.X))
		x[i] = 1
		p, err := inst.ResultPanels(x)
		if err != nil {
			t.Fatal(err)
		}
		nz := 0
		for _, r := range p["B"].([][]float64) {
			for _, v := range r {
				if v != 0 {
					nz++
				}
			}
		}
		if nz > 1 {
			t.Fatalf("x = e_%d gives %d nonzero entries of B", i, nz)
		}
	}
	if _, err := inst.ResultPanels(res.X[1:]); err == nil {
		t.Fatal("an estimate of the wrong size was accepted")
	}
	if _, err := json.Marshal(panels); err != nil {
		t.Fatal(err)
	}
}

func TestSSVMResultPanels(t *testing.T) {
	built, r := buildRun(t, spec.Run{Problem: "ssvm-chain", Params: spec.Params{"train": "40", "test": "30", "lambda": "0.1"},
		Algorithms: ssvmDefaults(), Seed: 5, Iters: 400})
	inst := built.(*SSVMInstance)
	p := inst.Problem
	m, err := inst.Method(r.Algorithms[0], LimitsOf(r), r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	recs, res := runAll(t, m)
	last := recs[len(recs)-1]
	if !last.Evaluated() {
		t.Fatal("the last record is not an evaluation")
	}
	zero := make([]float64, p.D)
	errCount := func(ws []ssvm.DecodedWord) (e, letters int) {
		for _, w := range ws {
			e += w.Errors
			letters += len(w.Truth)
		}
		return
	}
	for _, tc := range []struct {
		name    string
		w       []float64
		testErr float64
	}{
		{"zero", zero, math.NaN()},
		// Result.X is the averaged iterate (the default): its test error is
		// test_err_avg of the last evaluation.
		{"trained", res.X, last.Extra["test_err_avg"]},
	} {
		panels, err := inst.ResultPanels(tc.w)
		if err != nil {
			t.Fatal(err)
		}
		words, ok := panels["decoded"].([]ssvm.DecodedWord)
		if !ok || len(words) != DecodedWordsShown {
			t.Fatalf("%s: decoded panel %T with %d words, want %d", tc.name, panels["decoded"], len(words), DecodedWordsShown)
		}
		for i, w := range words {
			wd := p.Test.Words[i]
			for j := 0; j < wd.Len; j++ {
				if w.Truth[j] != byte('a'+p.Test.Y[wd.Start+j]) {
					t.Fatalf("%s word %d: truth %q does not spell the test labels", tc.name, i, w.Truth)
				}
			}
		}
		// Over every test word, the decoded errors give the test error the
		// method reported.
		all, err := p.DecodeWords(tc.w, 0)
		if err != nil {
			t.Fatal(err)
		}
		mean := 0.0
		for _, w := range all {
			mean += float64(w.Errors) / float64(len(w.Truth))
		}
		mean /= float64(len(all))
		if !math.IsNaN(tc.testErr) && math.Abs(mean-tc.testErr) > 1e-12 {
			t.Fatalf("%s: decoded words give test error %v, the method reported %v", tc.name, mean, tc.testErr)
		}
		if tc.name == "zero" {
			// Every labelling scores 0 at w = 0 and ties go to label 0:
			// every letter that is not 'a' is an error.
			for _, w := range all {
				want := 0
				for _, c := range w.Truth {
					if c != 'a' {
						want++
					}
				}
				if w.Errors != want {
					t.Fatalf("w = 0: %q decoded as %q with %d errors, want %d", w.Truth, w.Predicted, w.Errors, want)
				}
			}
		}
		e, n := errCount(all)
		t.Logf("%s: %d of %d test letters wrong, test error %.4f", tc.name, e, n, mean)
	}
	ez, _ := errCount(mustDecode(t, p, zero))
	et, _ := errCount(mustDecode(t, p, res.X))
	if !(et < ez) {
		t.Fatalf("training did not reduce the decoding errors: %d at w = 0, %d trained", ez, et)
	}
	if _, err := inst.ResultPanels(res.X[:3]); err == nil {
		t.Fatal("a weight vector of the wrong size was accepted")
	}
}

func mustDecode(t *testing.T, p *ssvm.Problem, w []float64) []ssvm.DecodedWord {
	t.Helper()
	ws, err := p.DecodeWords(w, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
