package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/figures/figtest"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// Every preset's figure reads cleanly at column, page and slide size:
// paper-fig1 from a small seeded run, paper-fig2's layout from series of
// the paper's shape (its real run needs the OCR data and half a minute).
func TestPresetFiguresReadable(t *testing.T) {
	var fa figureArgs
	fa.set = map[string]bool{"replications": true, "iters": true, "eval-every": true}
	fa.o.reps, fa.o.iters, fa.o.evalEvery = 2, 200, 5
	fa.params = map[string]string{"n": "60", "j": "12"}
	data, err := figurePresets["paper-fig1"].run(context.Background(), fa)
	if err != nil {
		t.Fatal(err)
	}
	figtest.Check(t, "paper-fig1", paperFigure1(data.(*scenarios.Figure1Data)))

	d := &ssvm.Figure2Data{N: 6251, D: 4082, Averaged: true}
	for _, lam := range []float64{0.05, 0.01, 0.001} {
		for j, algo := range []string{"bcfw-as", "bcfw", "ssfw-as"} {
			s := ssvm.Figure2Series{Algo: algo, Lambda: lam}
			for k := 0; k <= 50; k++ {
				p := 0.4 * float64(k)
				s.Passes = append(s.Passes, p)
				g := lam / (1 + float64(j+1)*p*p)
				s.Gap = append(s.Gap, g)
				s.RelGap = append(s.RelGap, g/(0.3+lam))
			}
			d.Series = append(d.Series, s)
		}
	}
	figtest.Check(t, "paper-fig2", paperFigure2(d))
}

// A run's figure from solve -out reads cleanly at every size, for a run
// with F* (toy-polygon) and one without, with heat maps (GFLASSO).
func TestSolveRunFigureReadable(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		args   []string
		panels int
	}{
		{"toy-polygon", []string{"-problem", "toy-polygon", "-algo", "afw,fw,pfw", "-iters", "300", "-replications", "2"}, 3},
		{"gflasso", []string{"-problem", "gflasso", "-n", "60", "-j", "12", "-algo", "bc-ssfw-as,spg", "-iters", "60"}, 7},
	} {
		for _, size := range []string{"column", "page", "slide"} {
			var files [2][]byte
			for i, ext := range []string{".svg", ".pdf"} {
				out := filepath.Join(dir, c.name+"-"+size+ext)
				if _, stderr, code := solve(t, append(c.args, "-figsize", size, "-out", out)...); code != 0 {
					t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				files[i] = b
			}
			figtest.CheckFiles(t, c.name+" run at "+size+" size", files[0], files[1], c.panels)
		}
	}
}
