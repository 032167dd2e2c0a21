package scenarios

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/problems/toy"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// lsqGenerated is a generated least-squares instance with its data.
type lsqGenerated interface {
	solver.Problem
	FStar() float64
	XStar() []float64
}

// writeLSQ writes the data of a generated instance (A from the row-major
// rows, y) as x.csv and y.csv and as data.svm (shortest exact decimal
// forms, so that reading them back gives the same numbers), and returns the
// three paths.
func writeLSQ(t *testing.T, dir string, rows []float64, n, p int, y []float64) (xp, yp, sp string) {
	t.Helper()
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var xb, yb, sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(num(y[i]))
		for j := 0; j < p; j++ {
			if j > 0 {
				xb.WriteByte(',')
			}
			xb.WriteString(num(rows[i*p+j]))
			if rows[i*p+j] != 0 {
				fmt.Fprintf(&sb, " %d:%s", j+1, num(rows[i*p+j]))
			}
		}
		xb.WriteByte('\n')
		yb.WriteString(num(y[i]) + "\n")
		sb.WriteByte('\n')
	}
	xp, yp, sp = filepath.Join(dir, "x.csv"), filepath.Join(dir, "y.csv"), filepath.Join(dir, "data.svm")
	for path, s := range map[string]string{xp: xb.String(), yp: yb.String(), sp: sb.String()} {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return xp, yp, sp
}

// TestToyProblemsFromDataFiles: simplex, l1ball and box built from CSV and
// svmlight files holding a generated instance's data are the same problem:
// the objective at the generated instance's known minimiser is the known F*
// bit for bit, and a pairwise FW run on the imported instance, certified by
// its duality gap, reaches F* (the imported instance does not know it).
func TestToyProblemsFromDataFiles(t *testing.T) {
	ctx := context.Background()
	const n, p = 120, 15
	cases := []struct {
		name   string
		params spec.Params
		gen    func() (lsqGenerated, error)
	}{
		{"simplex", spec.Params{}, func() (lsqGenerated, error) { return toy.NewSimplex(ctx, p, n, 3) }},
		{"l1ball", spec.Params{"radius": "2"}, func() (lsqGenerated, error) { return toy.NewL1Ball(ctx, p, n, 2, 3) }},
		{"box", spec.Params{"lo": "-0.5", "hi": "1.5"}, func() (lsqGenerated, error) { return toy.NewBox(ctx, p, n, -0.5, 1.5, 3) }},
	}
	for _, c := range cases {
		gen, err := c.gen()
		if err != nil {
			t.Fatal(err)
		}
		rows, y := toy.Data(gen)
		xp, yp, sp := writeLSQ(t, t.TempDir(), rows, n, p, y)
		for _, files := range []spec.Params{{"x": xp, "y": yp}, {"data": sp}} {
			t.Run(fmt.Sprintf("%s/%d-files", c.name, len(files)), func(t *testing.T) {
				params := spec.Params{}
				for k, v := range c.params {
					params[k] = v
				}
				for k, v := range files {
					params[k] = v
				}
				inst := buildScenario(t, c.name, params)
				info := inst.Info()
				if info.FStar != nil || info.Dim != p || info.Samples != n || info.Panels["data"] != "imported" {
					t.Fatalf("info of the imported instance: %+v", info)
				}
				pr := inst.(*FWInstance).Problem
				if got, want := pr.Objective(gen.XStar()), gen.FStar(); got != want {
					t.Fatalf("objective at the generated minimiser %v, generated F* %v", got, want)
				}
				m, err := inst.Method(spec.Algo{Algo: "pfw"}, solver.Limits{MaxIters: 100000, EvalEvery: 10, GapTol: 1e-12}, 1)
				if err != nil {
					t.Fatal(err)
				}
				res, err := m.Run(ctx, solver.RecorderFunc(func(solver.Record) {}))
				if err != nil || res.Summary.Status != solver.StatusConverged {
					t.Fatalf("pfw on the imported data: %v %+v", err, res.Summary)
				}
				if f, fs := res.Summary.Objective, gen.FStar(); math.Abs(f-fs) > 1e-10*math.Abs(fs) {
					t.Fatalf("F at the certified solution %v, generated F* %v", f, fs)
				}
			})
		}
	}
}

func buildScenario(t *testing.T, name string, params spec.Params) Instance {
	t.Helper()
	sc, ok := Lookup(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	v, err := sc.Values(params)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sc.Build(context.Background(), v, 1)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TestToyDataFilesRefused: malformed files are refused with the parameter,
// the file, the line, the column and the rule; so are files that do not
// fit together.
func TestToyDataFilesRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.csv", "1,2\n3,4\n5,6\n")
	y3 := write("y3.csv", "1\n2\n3\n")
	cases := []struct {
		name   string
		params spec.Params
		want   []string
	}{
		{"not a number", spec.Params{"x": write("word.csv", "1,2\n3,abc\n5,6\n"), "y": y3}, []string{"params.x", "word.csv:2:3", "not a finite number"}},
		{"ragged", spec.Params{"x": write("ragged.csv", "1,2\n3,4,5\n5,6\n"), "y": y3}, []string{"params.x", "ragged.csv:2", "column"}},
		{"empty field", spec.Params{"x": write("empty.csv", "1,2\n,4\n5,6\n"), "y": y3}, []string{"params.x", "empty.csv:2:1", "empty"}},
		{"bad response", spec.Params{"x": good, "y": write("ybad.csv", "1\nNaN\n3\n")}, []string{"params.y", "ybad.csv:2:1"}},
		{"too few responses", spec.Params{"x": good, "y": write("y2.csv", "1\n2\n")}, []string{"params.y", "y2.csv has 2 responses", "good.csv has 3 rows"}},
		{"y without x", spec.Params{"y": y3}, []string{"params.x", "needed with y"}},
		{"svmlight index", spec.Params{"data": write("bad.svm", "1 1:2 2:3\n2 3:1 2:4\n")}, []string{"params.data", "bad.svm:2:7", "indices must increase"}},
		{"both", spec.Params{"data": write("ok.svm", "1 1:2\n"), "x": good, "y": y3}, []string{"params.data", "either data or x and y"}},
	}
	for _, name := range []string{"simplex", "l1ball", "box"} {
		for _, c := range cases {
			sc, _ := Lookup(name)
			v, err := sc.Values(c.params)
			if err == nil {
				_, err = sc.Build(context.Background(), v, 1)
			}
			if err == nil {
				t.Fatalf("%s, %s: accepted", name, c.name)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: error %q does not contain %q", name, c.name, err, w)
				}
			}
		}
	}
}
