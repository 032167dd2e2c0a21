package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/problems/svmdual"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// ---- helpers -------------------------------------------------------------

// moduleRoot walks up from the package directory to the directory of go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the package directory")
		}
		dir = parent
	}
}

// referenceDir returns the shared reference instance folder or skips.
func referenceDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "..", "shared", "data", "reference", name)
	if _, err := os.Stat(filepath.Join(dir, "ref.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: reference instance %s not available (%v): these tests need the shared data folder beside the repository", name, err)
		}
		t.Skipf("reference instance %s not available (%v): these tests need the shared data folder beside the repository", name, err)
	}
	return dir
}

type refInstance struct {
	dir          string
	X            *mat.Dense
	y            []float64
	lambda, star float64
}

func loadReference(t *testing.T, name string) refInstance {
	t.Helper()
	dir := referenceDir(t, name)
	X, err := dataio.ReadCSV(filepath.Join(dir, "X.csv"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := dataio.ReadVector(filepath.Join(dir, "y.csv"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Lambda float64 `json:"lambda"`
		FStar  float64 `json:"fstar"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("%s/ref.json: %v", dir, err)
	}
	return refInstance{dir: dir, X: X, y: y, lambda: ref.Lambda, star: ref.FStar}
}

// ---- an independent solver: FISTA with backtracking and adaptive restart ----

// smoothLoss is the unpenalised loss of a model, written here from the
// formulas without the glm package.
func smoothLoss(kind string, X *mat.Dense, y, beta, grad []float64) float64 {
	n, p := X.Dims()
	for j := range grad {
		grad[j] = 0
	}
	s := 0.0
	for i := 0; i < n; i++ {
		z := 0.0
		for j := 0; j < p; j++ {
			z += X.At(i, j) * beta[j]
		}
		var f, d float64
		switch kind {
		case "lasso":
			f, d = 0.5*(z-y[i])*(z-y[i]), z-y[i]
		case "logistic":
			u := -y[i] * z // log(1 + e^u), derivative −y σ(u)
			if u > 0 {
				f = u + math.Log1p(math.Exp(-u))
			} else {
				f = math.Log1p(math.Exp(u))
			}
			d = -y[i] / (1 + math.Exp(-u))
		case "poisson":
			e := math.Exp(z)
			f, d = e-y[i]*z, e-y[i]
		}
		s += f
		for j := 0; j < p; j++ {
			grad[j] += d * X.At(i, j)
		}
	}
	return s
}

func soft(v, tau float64) float64 {
	switch {
	case v > tau:
		return v - tau
	case v < -tau:
		return v + tau
	}
	return 0
}

// fistaSolve minimises smoothLoss + λ‖β‖₁ to a KKT residual (the gradient
// mapping L·‖β − prox(β − ∇S/L)‖∞) of at most tol and returns β and the
// objective.
func fistaSolve(t *testing.T, kind string, X *mat.Dense, y []float64, lambda, tol float64) ([]float64, float64) {
	t.Helper()
	_, p := X.Dims()
	beta := make([]float64, p)
	yk := make([]float64, p)
	next := make([]float64, p)
	g := make([]float64, p)
	gb := make([]float64, p)
	L, tk := 1.0, 1.0
	obj := func(b []float64) float64 {
		s := smoothLoss(kind, X, y, b, gb)
		for _, v := range b {
			s += lambda * math.Abs(v)
		}
		return s
	}
	for it := 1; it <= 100000; it++ {
		fy := smoothLoss(kind, X, y, yk, g)
		for {
			q := fy
			for j := range next {
				next[j] = soft(yk[j]-g[j]/L, lambda/L)
				dj := next[j] - yk[j]
				q += g[j]*dj + 0.5*L*dj*dj
			}
			if smoothLoss(kind, X, y, next, gb) <= q+1e-13*math.Abs(q) {
				break
			}
			L *= 2
		}
		// gradient-based adaptive restart (O'Donoghue and Candès)
		restart := 0.0
		for j := range next {
			restart += (yk[j] - next[j]) * (next[j] - beta[j])
		}
		tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
		mom := (tk - 1) / tn
		if restart > 0 {
			tn, mom = 1, 0
		}
		for j := range beta {
			yk[j] = next[j] + mom*(next[j]-beta[j])
			beta[j] = next[j]
		}
		tk = tn
		L *= 0.95
		if it%10 == 0 {
			smoothLoss(kind, X, y, beta, gb)
			r := 0.0
			for j := range beta {
				r = math.Max(r, L*math.Abs(beta[j]-soft(beta[j]-gb[j]/L, lambda/L)))
			}
			if r <= tol {
				t.Logf("%s: reference FISTA reached KKT residual %.1e in %d iterations", kind, r, it)
				return beta, obj(beta)
			}
		}
	}
	t.Fatalf("%s: the test's FISTA did not reach KKT residual %g", kind, tol)
	return nil, 0
}

// ---- the reference instances -------------------------------------------

var referenceCases = []struct{ problem, dir string }{
	{"lasso", "lasso-s201"},
	{"logistic", "logistic-s202"},
	{"poisson", "poisson-s203"},
}

func fmtF(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// buildReference builds the scenario from the reference CSV files.
func buildReference(t *testing.T, problem string, ref refInstance) (*Scenario, Values, Instance) {
	t.Helper()
	r := spec.Run{Problem: problem, Algorithms: []spec.Algo{{Algo: "afw"}}, Params: spec.Params{
		"x": filepath.Join(ref.dir, "X.csv"), "y": filepath.Join(ref.dir, "y.csv"), "lambda": fmtF(ref.lambda),
	}}
	s, v, err := Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := s.Build(context.Background(), v, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s, v, inst
}

func relErr(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }

// TestReferenceObjective checks the models' objective against the optima
// computed outside fwlab, at a solution found by the test's own FISTA.
func TestReferenceObjective(t *testing.T) {
	for _, c := range referenceCases {
		t.Run(c.problem, func(t *testing.T) {
			ref := loadReference(t, c.dir)
			beta, f := fistaSolve(t, c.problem, ref.X, ref.y, ref.lambda, 1e-10)
			if e := relErr(f, ref.star); e > 1e-8 {
				t.Errorf("independent FISTA objective %.15g, F* %.15g: relative error %.1e", f, ref.star, e)
			}
			_, _, inst := buildReference(t, c.problem, ref)
			fi := inst.(*FWInstance)
			x := make([]float64, fi.Problem.Dim())
			fi.Prox.Lift(x, beta)
			got := fi.Problem.Objective(x)
			if e := relErr(got, ref.star); e > 1e-8 {
				t.Errorf("model objective at the FISTA solution %.15g, F* %.15g: relative error %.1e", got, ref.star, e)
			}
			if e := relErr(got, f); e > 1e-12 {
				t.Errorf("model objective %.15g differs from the test's formula %.15g", got, f)
			}
			t.Logf("F* %.15g, FISTA %.15g, model %.15g", ref.star, f, got)
		})
	}
}

// runAlgo runs one algorithm on an instance and returns its summary.
func runAlgo(t *testing.T, inst Instance, a spec.Algo, lim solver.Limits) solver.Summary {
	t.Helper()
	if err := a.Normalize(""); err != nil {
		t.Fatal(err)
	}
	m, err := inst.Method(a, lim, 7)
	if err != nil {
		t.Fatalf("%s: %v", a.Algo, err)
	}
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
	if err != nil {
		t.Fatalf("%s: %v", a.Algo, err)
	}
	return res.Summary
}

// TestReferenceSolvers checks that the Frank-Wolfe methods and FISTA reach
// the reference optima.
func TestReferenceSolvers(t *testing.T) {
	if testing.Short() {
		t.Skip("solver runs on the reference instances are skipped in -short mode")
	}
	algos := []spec.Algo{
		{Algo: "ssfw-as", Schedule: "paper", Stepsize: "curvature"},
		{Algo: "afw", Stepsize: "curvature"},
		{Algo: "fista"},
	}
	for _, c := range referenceCases {
		t.Run(c.problem, func(t *testing.T) {
			ref := loadReference(t, c.dir)
			_, _, inst := buildReference(t, c.problem, ref)
			for _, a := range algos {
				lim := solver.Limits{MaxIters: 20000, GapTol: 1e-10 * math.Abs(ref.star), EvalEvery: 10}
				s := runAlgo(t, inst, a, lim)
				e := relErr(s.Objective, ref.star)
				t.Logf("%s: objective %.15g (relative error %.1e), gap %.1e, %d iterations, %.1f passes, status %s", a.Algo, s.Objective, e, s.Gap, s.Iters, s.Passes, s.Status)
				if e > 1e-8 {
					t.Errorf("%s: objective %.15g, F* %.15g: relative error %.1e (status %s: %s)", a.Algo, s.Objective, ref.star, e, s.Status, s.Message)
				}
				if s.Objective < ref.star-1e-9*math.Abs(ref.star) {
					t.Errorf("%s: objective %.15g below F* %.15g", a.Algo, s.Objective, ref.star)
				}
			}
		})
	}
}

// TestGeneratedAgreement: on generated instances with the scenarios'
// defaults, the solution is sparse but not trivial, and ssfw-as and afw agree
// with the test's own FISTA.
func TestGeneratedAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("solver runs are skipped in -short mode")
	}
	for _, problem := range []string{"lasso", "logistic", "poisson"} {
		t.Run(problem, func(t *testing.T) {
			r := spec.Run{Problem: problem, Algorithms: []spec.Algo{{Algo: "ssfw-as"}}}
			s, v, err := Resolve(&r)
			if err != nil {
				t.Fatal(err)
			}
			const seed = 11
			inst, err := s.Build(context.Background(), v, seed)
			if err != nil {
				t.Fatal(err)
			}
			fi := inst.(*FWInstance)
			lam := fi.Meta.Panels["lambda"].(float64)
			n, p, k := v.Int("n"), v.Int("p"), v.Int("k")
			X, y := instanceData(t, problem, n, p, k, seed)
			beta, f := fistaSolve(t, problem, X, y, lam, 1e-10)
			support := fi.Meta.Panels["support_true"].([]int)
			nnz, found := 0, 0
			for j, b := range beta {
				if b != 0 {
					nnz++
				}
				for _, s := range support {
					if s == j && b != 0 {
						found++
					}
				}
			}
			t.Logf("λ = %.4g (λ_max %.4g), F* %.15g, support size %d of %d, %d of the %d true features", lam, fi.Meta.Panels["lambda_max"], f, nnz, p, found, k)
			if nnz < k || nnz > p/2 || found < k-1 {
				t.Errorf("solution support size %d with %d of %d true features: the generated instance should be sparse but not trivial", nnz, found, k)
			}
			for _, a := range []spec.Algo{{Algo: "ssfw-as"}, {Algo: "afw"}} {
				sum := runAlgo(t, inst, a, solver.Limits{MaxIters: 20000, GapTol: 1e-10 * math.Abs(f), EvalEvery: 10})
				t.Logf("%s: objective %.15g, %d iterations, status %s", a.Algo, sum.Objective, sum.Iters, sum.Status)
				if e := relErr(sum.Objective, f); e > 1e-8 {
					t.Errorf("%s: objective %.15g, FISTA %.15g (relative error %.1e, status %s)", a.Algo, sum.Objective, f, e, sum.Status)
				}
			}
			// The project's own fista, run until its KKT residual (the
			// record's extra "kkt") is at most 1e-10, agrees as well.
			fa := spec.Algo{Algo: "fista"}
			if err := fa.Normalize(""); err != nil {
				t.Fatal(err)
			}
			m, err := inst.Method(fa, solver.Limits{MaxIters: 50000, EvalEvery: 10}, 1)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			kkt, obj, at := math.Inf(1), math.NaN(), 0
			if _, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
				if v, ok := r.Extra["kkt"]; ok && r.Objective != nil && kkt > 1e-10 {
					kkt, obj, at = v, *r.Objective, r.K
					if kkt <= 1e-10 {
						cancel()
					}
				}
			})); err != nil {
				t.Fatal(err)
			}
			t.Logf("fista: KKT residual %.1e at iteration %d, objective %.15g", kkt, at, obj)
			if kkt > 1e-10 {
				t.Fatalf("fista did not reach a KKT residual of 1e-10 (%.1e after %d iterations)", kkt, at)
			}
			if e := relErr(obj, f); e > 1e-8 {
				t.Errorf("fista at KKT residual %.1e: objective %.15g, the test's FISTA %.15g (relative error %.1e)", kkt, obj, f, e)
			}
		})
	}
}

// svmCD solves the SVM dual by exact coordinate descent (as in LIBLINEAR's
// dual solver) to a projected-gradient residual below tol; it returns the
// dual objective ½‖w‖² − Σα.
func svmCD(t *testing.T, Z *mat.Dense, y []float64, C, tol float64) float64 {
	t.Helper()
	l, d := Z.Dims()
	alpha := make([]float64, l)
	w := make([]float64, d)
	for sweep := 0; sweep < 100000; sweep++ {
		worst := 0.0
		for i := 0; i < l; i++ {
			g, q := -1.0, 0.0
			for j := 0; j < d; j++ {
				g += y[i] * Z.At(i, j) * w[j]
				q += Z.At(i, j) * Z.At(i, j)
			}
			pg := g
			if (alpha[i] == 0 && g > 0) || (alpha[i] == C && g < 0) {
				pg = 0
			}
			worst = math.Max(worst, math.Abs(pg))
			if pg == 0 || q == 0 {
				continue
			}
			na := math.Min(math.Max(alpha[i]-g/q, 0), C)
			for j := 0; j < d; j++ {
				w[j] += (na - alpha[i]) * y[i] * Z.At(i, j)
			}
			alpha[i] = na
		}
		if worst <= tol {
			s, sum := 0.0, 0.0
			for _, v := range w {
				s += v * v
			}
			for _, a := range alpha {
				sum += a
			}
			t.Logf("coordinate descent: residual %.1e after %d sweeps", worst, sweep+1)
			return 0.5*s - sum
		}
	}
	t.Fatal("coordinate descent did not converge")
	return 0
}

func TestSVMDualAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("solver runs are skipped in -short mode")
	}
	r := spec.Run{Problem: "svm-dual", Algorithms: []spec.Algo{{Algo: "afw"}}, Params: spec.Params{"l": "120", "d": "10"}}
	s, v, err := Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := s.Build(context.Background(), v, 5)
	if err != nil {
		t.Fatal(err)
	}
	Z, y, err := svmdual.Generate(120, 10, v.Float("separation"), 5)
	if err != nil {
		t.Fatal(err)
	}
	f := svmCD(t, Z, y, v.Float("C"), 1e-12)
	for _, a := range []spec.Algo{{Algo: "afw"}, {Algo: "ssfw-as"}, {Algo: "pfw"}, {Algo: "fista"}} {
		if err := a.Normalize(""); err != nil {
			t.Fatal(err)
		}
		m, err := inst.Method(a, solver.Limits{MaxIters: 20000, GapTol: 1e-11 * math.Abs(f), EvalEvery: 10}, 3)
		if err != nil {
			t.Fatal(err)
		}
		var last solver.Record
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
			if r.Evaluated() {
				last = r
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		acc, ok := last.Extra["train_acc"]
		t.Logf("%s: objective %.15g (CD %.15g), %d iterations, status %s, train_acc %.3f", a.Algo, sum.Objective, f, sum.Iters, sum.Status, acc)
		if e := relErr(sum.Objective, f); e > 1e-8 {
			t.Errorf("%s: objective %.15g, coordinate descent %.15g (relative error %.1e)", a.Algo, sum.Objective, f, e)
		}
		if !ok || acc < 0.8 || acc > 1 {
			t.Errorf("%s: train_acc %v (present %v), want a fraction ≥ 0.8 on well-separated classes", a.Algo, acc, ok)
		}
	}
}

// instanceData regenerates the data of a generated GLM instance (same
// generator, parameters and seed as the scenario's Build).
func instanceData(t *testing.T, problem string, n, p, k int, seed int64) (*mat.Dense, []float64) {
	t.Helper()
	loss := map[string]glm.Loss{"lasso": glm.Squared, "logistic": glm.Logistic, "poisson": glm.Poisson}[problem]
	s, err := glm.Generate(loss, n, p, k, 1, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s.X, s.Y
}

// ---- registration and data import ---------------------------------------

func TestModelScenariosRegistered(t *testing.T) {
	for _, name := range []string{"lasso", "logistic", "poisson", "svm-dual"} {
		s, ok := Lookup(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if s.Group != "model" || len(s.Defaults) != 2 || s.Defaults[0].Algo != "ssfw-as" || s.Defaults[1].Algo != "fista" {
			t.Errorf("%s: group %q defaults %v", name, s.Group, s.Defaults)
		}
		for _, a := range []string{"ssfw-as", "afw", "pfw", "fw", "fista", "pgd"} {
			if !s.Supports(a) {
				t.Errorf("%s does not list %s", name, a)
			}
		}
		for _, p := range s.Params {
			if p.Help == "" || strings.Contains(p.Help, "\n") {
				t.Errorf("%s: parameter %s needs a one-line help", name, p.Name)
			}
			if err := p.Check(p.Default); err != nil && p.Kind != Path {
				t.Errorf("%s: default of %s fails its own rule: %v", name, p.Name, err)
			}
			if p.Kind == Path && p.Default != "" {
				t.Errorf("%s: path parameter %s has a default", name, p.Name)
			}
		}
		v, err := s.Values(nil)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := s.Build(context.Background(), v, 3)
		if err != nil {
			t.Fatalf("%s with defaults: %v", name, err)
		}
		info := inst.Info()
		if info.Dim < 2 || info.Samples < 1 || info.Blocks != 1 {
			t.Errorf("%s: info %+v", name, info)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func buildWith(problem string, params spec.Params) error {
	r := spec.Run{Problem: problem, Algorithms: []spec.Algo{{Algo: "afw"}}, Params: params}
	s, v, err := Resolve(&r)
	if err != nil {
		return err
	}
	_, err = s.Build(context.Background(), v, 1)
	return err
}

func TestModelDataImportErrors(t *testing.T) {
	dir := t.TempDir()
	X := writeFile(t, dir, "X.csv", "1,2\n3,4\n5,6\n")
	y := writeFile(t, dir, "y.csv", "1\n-1\n1\n")
	bad := writeFile(t, dir, "bad.csv", "1,2\n3,zz\n")
	short := writeFile(t, dir, "short.csv", "1\n2\n")
	half := writeFile(t, dir, "half.csv", "1\n0.5\n1\n")
	svm := writeFile(t, dir, "d.svm", "+1 1:1\n-1 2:x\n")
	missing := filepath.Join(dir, "nope.csv")
	cases := []struct {
		problem string
		params  spec.Params
		field   string
		want    string // a substring of the message
	}{
		{"lasso", spec.Params{"x": missing, "y": y}, "params.x", missing},
		{"lasso", spec.Params{"x": bad, "y": y}, "params.x", bad + `:2:3: field 2: "zz" is not a finite number`},
		{"lasso", spec.Params{"x": X}, "params.y", "is needed with x"},
		{"lasso", spec.Params{"x": X, "y": short}, "params.y", short + " has 2 responses, but " + X + " has 3 rows"},
		{"logistic", spec.Params{"x": X, "y": half}, "params.y", half + ": row 2: label 0.5 must be -1 or +1"},
		{"logistic", spec.Params{"data": svm}, "params.data", svm + `:2:6: value "x" of feature 2 is not a finite number`},
		{"logistic", spec.Params{"data": svm, "x": X}, "params.data", "not both"},
		{"svm-dual", spec.Params{"data": svm}, "params.data", svm + ":2:6:"},
		{"svm-dual", spec.Params{"C": "0"}, "params.C", "must be a number > 0"},
		{"lasso", spec.Params{"k": "80", "p": "10"}, "params.k", "must be at most p = 10"},
	}
	for _, c := range cases {
		err := buildWith(c.problem, c.params)
		var fe *spec.FieldError
		if err == nil || !errors.As(err, &fe) {
			t.Errorf("%s %v: error %v, want a field error", c.problem, c.params, err)
			continue
		}
		if fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: error %q (field %s), want field %s and %q", c.problem, c.params, err, fe.Field, c.field, c.want)
		}
	}
	// valid import: logistic from CSV with 0/1 labels, svm-dual from svmlight
	y01 := writeFile(t, dir, "y01.csv", "1,0,1\n")
	if err := buildWith("logistic", spec.Params{"x": X, "y": y01, "lambda": "0.5"}); err != nil {
		t.Errorf("logistic 0/1 import: %v", err)
	}
	good := writeFile(t, dir, "g.svm", "+1 1:1 3:2 # a\n-1 2:1\n0 1:-1 2:0.5\n")
	if err := buildWith("svm-dual", spec.Params{"data": good, "C": "2"}); err != nil {
		t.Errorf("svm-dual import: %v", err)
	}
	if err := buildWith("logistic", spec.Params{"data": good}); err != nil {
		t.Errorf("logistic svmlight import: %v", err)
	}
}

// TestLassoSlackCollapse runs the curl example of docs/api.md (lasso, n 200, p 50,
// λ 2, ssfw-as with ρ 0.1, α 0.5, 2000 iterations, the default seed): with
// the slack collapse it reaches FISTA's optimum within 2000 iterations;
// with slack=keep the epigraph slack t − ‖β‖₁ stays large and F stalls
// above it (the behaviour the collapse removes).
func TestLassoSlackCollapse(t *testing.T) {
	if testing.Short() {
		t.Skip("solver runs are skipped in -short mode")
	}
	run := func(slack string, a spec.Algo) (solver.Summary, solver.Record) {
		t.Helper()
		r := spec.Run{Problem: "lasso", Algorithms: []spec.Algo{a}, Iters: 2000, EvalEvery: 500, Seed: spec.DefaultSeed,
			Params: spec.Params{"n": "200", "p": "50", "lambda": "2", "slack": slack}}
		s, v, err := Resolve(&r)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := s.Build(context.Background(), v, r.Seed)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := Jobs(inst, &r)
		if err != nil {
			t.Fatal(err)
		}
		var last solver.Record
		res, err := jobs[0].Method.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
			if rec.Objective != nil {
				last = rec
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Summary, last
	}
	ssfw := spec.Algo{Algo: "ssfw-as", Rho: 0.1, Alpha: 0.5}
	fista, _ := run("collapse", spec.Algo{Algo: "fista"})
	col, colRec := run("collapse", ssfw)
	keep, keepRec := run("keep", ssfw)
	t.Logf("fista F %.15g gap %.1e; collapse F %.15g gap %.1e t_slack %.1e; keep F %.15g gap %.1e t_slack %.4g",
		fista.Objective, fista.Gap, col.Objective, col.Gap, colRec.Extra["t_slack"], keep.Objective, keep.Gap, keepRec.Extra["t_slack"])
	if !(fista.Gap <= 1e-6*fista.Objective) {
		t.Fatalf("fista did not converge: gap %v at F %v", fista.Gap, fista.Objective)
	}
	if e := math.Abs(col.Objective-fista.Objective) / fista.Objective; e > 1e-9 && !(col.Gap <= 1e-6*col.Objective) {
		t.Errorf("collapse: F %.15g against FISTA's %.15g (relative %.1e), gap %.3g", col.Objective, fista.Objective, e, col.Gap)
	}
	if s := colRec.Extra["t_slack"]; math.Abs(s) > 1e-9 {
		t.Errorf("collapse: t_slack %v at the end", s)
	}
	// Without the collapse the slack stalls the method well above F*.
	if !(keep.Objective > fista.Objective+0.1) || !(keepRec.Extra["t_slack"] > 1) {
		t.Errorf("keep: F %.15g, t_slack %v: expected the stall the collapse removes", keep.Objective, keepRec.Extra["t_slack"])
	}
}
