package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// buildRun resolves a run spec and builds its instance; it returns the
// instance and the spec as resolved.
func buildRun(t *testing.T, r spec.Run) (Instance, *spec.Run) {
	t.Helper()
	s, v, err := Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := s.Build(context.Background(), v, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return inst, &r
}

func TestSSVMChainScenario(t *testing.T) {
	inst, r := buildRun(t, spec.Run{Problem: "ssvm-chain", Params: spec.Params{"train": "40", "lambda": "0.5"},
		Algorithms: ssvmDefaults(), Seed: 3, Iters: 400, EvalEvery: 10})
	info := inst.Info()
	if info.Samples != 40 || info.Blocks != 40 || info.Dim != 5*9+2*5+25 {
		t.Fatalf("info %+v", info)
	}
	if _, err := json.Marshal(info); err != nil {
		t.Fatal(err)
	}
	for _, a := range append(r.Algorithms, spec.Algo{Algo: "ssg"}) {
		if a.Algo == "ssg" {
			if err := a.Normalize(""); err != nil {
				t.Fatal(err)
			}
		}
		m, err := inst.Method(a, LimitsOf(r), r.Seed)
		if err != nil {
			t.Fatal(err)
		}
		var recs []solver.Record
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) { recs = append(recs, rec) }))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 401 || res.Summary.Status != solver.StatusMaxIters {
			t.Fatalf("%s: %d records, status %s", a.Algo, len(recs), res.Summary.Status)
		}
		// A quarter pass: every 10 iterations.
		evals := 0
		for _, rec := range recs {
			if rec.Evaluated() {
				evals++
				if _, err := json.Marshal(rec); err != nil {
					t.Fatalf("%s: record does not encode: %v", a.Algo, err)
				}
				for _, key := range []string{"primal_plain", "train_err", "test_err", "train_err_avg", "test_err_avg"} {
					if _, ok := rec.Extra[key]; !ok {
						t.Fatalf("%s: extra lacks %s: %v", a.Algo, key, rec.Extra)
					}
				}
				if a.Algo != "ssg" && (rec.Gap == nil || rec.Extra["rel_gap"] <= 0) {
					t.Fatalf("%s: no gap on an evaluation record", a.Algo)
				}
			}
		}
		if evals != 42 { // the start, k = 1 and every 10th iteration
			t.Fatalf("%s: %d evaluations, want 42", a.Algo, evals)
		}
		if want := 400.0 / 40; res.Summary.Passes != want {
			t.Fatalf("%s: passes %v, want %v", a.Algo, res.Summary.Passes, want)
		}
	}
}

func TestSSVMScenarioErrors(t *testing.T) {
	cases := []struct {
		run   spec.Run
		field string
	}{
		{spec.Run{Problem: "ssvm-chain", Params: spec.Params{"lambda": "0"}, Algorithms: ssvmDefaults()}, "params.lambda"},
		{spec.Run{Problem: "ssvm-chain", Params: spec.Params{"labels": "9"}, Algorithms: ssvmDefaults()}, "params.labels"},
		{spec.Run{Problem: "ssvm-chain", Params: spec.Params{"minlen": "5", "maxlen": "4"}, Algorithms: ssvmDefaults()}, "params.maxlen"},
		{spec.Run{Problem: "ssvm-chain", Params: spec.Params{"train": "100000", "test": "100000", "features": "256", "maxlen": "12"}, Algorithms: ssvmDefaults()}, "params.train"},
		{spec.Run{Problem: "ssvm-ocr", Params: spec.Params{"data": filepath.Join(t.TempDir(), "none")}, Algorithms: ssvmDefaults()}, "params.data"},
		{spec.Run{Problem: "ssvm-chain", Algorithms: []spec.Algo{{Algo: "afw"}}}, "algorithms[0].algo"},
	}
	for _, tc := range cases {
		s, v, err := Resolve(&tc.run)
		if err == nil {
			_, err = s.Build(context.Background(), v, 1)
		}
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Fatalf("%v: error %v, want a field error on %s", tc.run.Params, err, tc.field)
		}
		if tc.field == "params.data" && !strings.Contains(fe.Msg, "none") {
			t.Fatalf("missing data error should name the path tried: %v", fe)
		}
	}
}

func TestSSVMPresets(t *testing.T) {
	for _, name := range []string{"paper-fig2", "paper-fig2-l005", "paper-fig2-l0001"} {
		p, ok := LookupPreset(name)
		if !ok {
			t.Fatalf("preset %s missing", name)
		}
		r := p.Spec
		if _, _, err := Resolve(&r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestFigure2Smoke(t *testing.T) {
	if _, err := ssvm.ResolveOCR(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: OCR data absent: %v", err)
		}
		t.Skipf("OCR data absent: %v", err)
	}
	fig, err := Figure2(context.Background(), Figure2Options{Lambdas: []float64{0.01}, Passes: 0.01, EvalPerPass: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Series) != 2 || fig.N != 6251 || fig.D != 4082 {
		t.Fatalf("figure %+v", fig)
	}
	for _, s := range fig.Series {
		if len(s.Gap) < 2 || len(s.Passes) != len(s.Gap) || len(s.RelGap) != len(s.Gap) || s.Passes[len(s.Passes)-1] < 0.01 {
			t.Fatalf("%s: series %+v", s.Algo, s)
		}
		for j, g := range s.Gap {
			if !(g >= 0) || s.RelGap[j] != g/s.Primal[j] {
				t.Fatalf("%s: gap %v rel %v primal %v", s.Algo, g, s.RelGap[j], s.Primal[j])
			}
		}
	}
	if _, err := json.Marshal(fig); err != nil {
		t.Fatal(err)
	}
}
