package server

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// csvRows parses a coefficients download.
func csvRows(t *testing.T, body []byte) [][]float64 {
	t.Helper()
	var rows [][]float64
	for i, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		var row []float64
		for _, f := range strings.Split(line, ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// Every problem with a coefficient vector gives each finished trace's
// coefficients, in its panels and as CSV (the same values, exactly); the
// constrained ones lie in their sets (the simplex sums to 1, the box and
// the l1 ball hold them), GFLASSO's are its B; a problem without one
// answers 404 naming why.
func TestCoefficientsOfEveryModel(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	for _, c := range []struct {
		problem string
		params  spec.Params
		algo    string
		check   func(t *testing.T, x []float64)
	}{
		{"lasso", spec.Params{"n": "40", "p": "12", "k": "3"}, "fw", nil},
		{"logistic", spec.Params{"n": "40", "p": "12", "k": "3"}, "fw", nil},
		{"poisson", spec.Params{"n": "40", "p": "12", "k": "3"}, "fw", nil},
		{"svm-dual", spec.Params{"l": "30", "d": "4"}, "fw", nil},
		{"simplex", spec.Params{"p": "15"}, "afw", func(t *testing.T, x []float64) {
			sum := 0.0
			for _, v := range x {
				sum += v
				if v < -1e-12 {
					t.Errorf("a coefficient %v below 0 on the simplex", v)
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("the coefficients sum to %v on the simplex", sum)
			}
		}},
		{"l1ball", spec.Params{"p": "15", "radius": "2"}, "afw", func(t *testing.T, x []float64) {
			n := 0.0
			for _, v := range x {
				n += math.Abs(v)
			}
			if n > 2+1e-9 {
				t.Errorf("‖x‖₁ = %v over the radius 2", n)
			}
		}},
		{"box", spec.Params{"p": "15", "lo": "-0.5", "hi": "0.25"}, "afw", func(t *testing.T, x []float64) {
			for _, v := range x {
				if v < -0.5-1e-12 || v > 0.25+1e-12 {
					t.Errorf("a coefficient %v outside the box [-0.5, 0.25]", v)
				}
			}
		}},
		{"gflasso", spec.Params{"n": "30", "j": "6", "k": "4"}, "bc-ssfw-as", nil},
	} {
		t.Run(c.problem, func(t *testing.T) {
			id := create(t, ts, spec.Run{Problem: c.problem, Params: c.params, Algorithms: []spec.Algo{{Algo: c.algo}}, Seed: 2, Iters: 40})
			waitFinished(t, srv, id)
			code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/0/coefficients.csv", nil)
			if code != 200 {
				t.Fatalf("GET coefficients.csv: %d %s", code, body)
			}
			rows := csvRows(t, body)
			_, pb := do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/0/panels", nil)
			var p struct {
				Coefficients []float64
				B            [][]float64
			}
			if err := json.Unmarshal(pb, &p); err != nil {
				t.Fatal(err)
			}
			var x []float64
			if c.problem == "gflasso" {
				if len(p.B) != 6 || len(p.B[0]) != 4 {
					t.Fatalf("B is %d × %d, want 6 × 4", len(p.B), len(p.B[0]))
				}
				for j, row := range rows {
					if len(row) != 4 || j >= 6 {
						t.Fatalf("the CSV's row %d has %d values, want B's 6 rows of 4", j+1, len(row))
					}
					for k, v := range row {
						if v != p.B[j][k] {
							t.Errorf("CSV B[%d,%d] = %v, the panel's %v", j, k, v, p.B[j][k])
						}
					}
					x = append(x, row...)
				}
			} else {
				want := 15
				switch c.problem {
				case "lasso", "logistic", "poisson":
					want = 12 // β, without the epigraph variable
				case "svm-dual":
					want = 30 // α, one per example
				}
				if len(p.Coefficients) != want || len(rows) != want {
					t.Fatalf("%d coefficients in the panel, %d CSV rows, want %d", len(p.Coefficients), len(rows), want)
				}
				for i, row := range rows {
					if len(row) != 1 || row[0] != p.Coefficients[i] {
						t.Errorf("CSV row %d = %v, the panel's %v", i+1, row, p.Coefficients[i])
					}
					x = append(x, row[0])
				}
			}
			nonzero := false
			for _, v := range x {
				nonzero = nonzero || v != 0
			}
			if !nonzero {
				t.Errorf("every coefficient is 0")
			}
			if c.check != nil {
				c.check(t, x)
			}
		})
	}
	t.Run("over the cap", func(t *testing.T) {
		p := scenarios.MaxCoefficients + 1
		id := create(t, ts, spec.Run{Problem: "lasso", Params: spec.Params{"n": "3", "p": strconv.Itoa(p), "k": "1"}, Algorithms: []spec.Algo{{Algo: "fw"}}, Seed: 2, Iters: 2})
		waitFinished(t, srv, id)
		code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/0/coefficients.csv", nil)
		if code != 404 || !strings.Contains(string(body), strconv.Itoa(p)+" coefficients, over the") || !strings.Contains(string(body), "-save-x") {
			t.Errorf("GET coefficients.csv of %d coefficients: %d %s, want 404 saying how many and where to get them", p, code, body)
		}
		code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/0/panels", nil)
		if code != 200 || len(body) > 4096 {
			t.Errorf("the trace's panels: %d, %d bytes; want a note, not the vector", code, len(body))
		}
	})
	t.Run("toy-polygon", func(t *testing.T) {
		id := create(t, ts, spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "fw"}}, Seed: 2, Iters: 20})
		waitFinished(t, srv, id)
		code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/0/coefficients.csv", nil)
		if code != 404 || !strings.Contains(string(body), "no coefficient vector") {
			t.Errorf("GET coefficients.csv of a toy-polygon run: %d %s, want 404 saying it has none", code, body)
		}
	})
}
