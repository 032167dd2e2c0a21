package scenarios

import (
	"context"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/problems/svmdual"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// The l1-penalised models and the SVM dual of the paper's Remark 1.

// lambdaAutoFrac is the fraction of λ_max used when lambda is 0 (auto),
// chosen per model so that on the generated data the solution keeps the true
// support and few other features (checked by the package's tests).
func lambdaAutoFrac(loss glm.Loss) float64 {
	switch loss {
	case glm.Logistic:
		return 0.3
	case glm.Poisson:
		return 0.25
	}
	return 0.1
}

// maxEntries bounds the size of generated data matrices.
const maxEntries = 20_000_000

// MaxDenseEntries bounds examples × features of the data the dense models
// (logistic, svm-dual) hold, so that an upload can be checked against it.
const MaxDenseEntries = maxEntries

var modelAlgorithms = spec.AlgorithmsFor("model")

func modelDefaults() []spec.Algo { return []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}} }

func intParam(name, def, help string, min float64) Param {
	return Param{Name: name, Kind: Int, Default: def, Help: help, Min: min, HasMin: true, Max: 1e6, HasMax: true}
}

func glmParams(loss glm.Loss, svmlight bool) []Param {
	n, p, k, noise := "200", "50", "5", "1"
	switch loss {
	case glm.Logistic:
		n, p = "300", "40"
	case glm.Poisson:
		n, p = "300", "30"
	}
	ps := []Param{
		intParam("n", n, "samples (rows of X) of the generated data", 1),
		intParam("p", p, "features (columns of X) of the generated data", 1),
		intParam("k", k, "nonzero coefficients of the true β of the generated data (at most p)", 0),
	}
	if loss != glm.Poisson {
		help := "standard deviation of the Gaussian noise added to Xβ"
		if loss == glm.Logistic {
			help = "scale of the logistic noise on Xβ before taking signs (1: the logistic model)"
		}
		ps = append(ps, Param{Name: "noise", Kind: Float, Default: noise, Help: help, HasMin: true})
	}
	ps = append(ps,
		Param{Name: "lambda", Kind: Float, Default: "0", Help: fmt.Sprintf("penalty weight λ > 0; 0 picks λ = %g·λ_max, λ_max = ‖Xᵀf′(0)‖∞ (above it β* = 0)", lambdaAutoFrac(loss)), HasMin: true},
		Param{Name: "T", Kind: Float, Default: "0", Help: "bound T on ‖β‖₁ ≤ t ≤ T; 0 picks the safe bound (F(0) − Σ inf f_i)/λ, a smaller T must still be ≥ ‖β*‖₁", HasMin: true},
		Param{Name: "slack", Kind: Choice, Default: "collapse", Choices: []string{"collapse", "keep"},
			Help: "methods with away or pairwise steps: collapse lowers the epigraph variable t to ‖β‖₁ after each step (exactly λ·(t − ‖β‖₁) off the objective, β unchanged); keep leaves t to the steps (the slack then drains slowly). fw and bcfw always keep"},
		Param{Name: "x", Kind: Path, Format: "csv", Default: "", Help: "CSV file of the design matrix X (numbers, no header); replaces the generated data, needs y"},
		Param{Name: "y", Kind: Path, Format: "csv", Default: "", Help: "CSV file of the responses y (one column or one row), with x"},
	)
	if svmlight {
		ps = append(ps, Param{Name: "data", Kind: Path, Format: "svmlight", Default: "", Help: "svmlight/LIBSVM file with labels ±1 (or 0/1) and features; replaces the generated data"})
	}
	return ps
}

func init() {
	Register(&Scenario{
		Name:       "lasso",
		Title:      "LASSO",
		Help:       "½‖y − Xβ‖² + λ‖β‖₁ in P1 form via the epigraph of the l1 norm (Remark 1 i).",
		Group:      "model",
		Params:     glmParams(glm.Squared, false),
		Algorithms: modelAlgorithms,
		Defaults:   modelDefaults(),
		Build:      buildGLM("lasso", glm.Squared),
	})
	Register(&Scenario{
		Name:       "logistic",
		Title:      "l1-regularised logistic regression",
		Help:       "Σ log(1 + exp(−y_i x_iᵀβ)) + λ‖β‖₁, labels ±1 or 0/1 (Remark 1 iii).",
		Group:      "model",
		Params:     glmParams(glm.Logistic, true),
		Algorithms: modelAlgorithms,
		Defaults:   modelDefaults(),
		Build:      buildGLM("logistic", glm.Logistic),
	})
	Register(&Scenario{
		Name:       "poisson",
		Title:      "l1-regularised Poisson regression",
		Help:       "Σ exp(x_iᵀβ) − y_i x_iᵀβ + λ‖β‖₁ for counts y (Remark 1 ii, without the constant log y_i!).",
		Group:      "model",
		Params:     glmParams(glm.Poisson, false),
		Algorithms: modelAlgorithms,
		Defaults:   modelDefaults(),
		Build:      buildGLM("poisson", glm.Poisson),
	})
	Register(&Scenario{
		Name:  "svm-dual",
		Title: "l1-loss SVM dual",
		Help:  "½‖Aα‖² − 1ᵀα over the box 0 ≤ α ≤ C, A = [y_1z_1, …, y_lz_l] (Remark 1 iv).",
		Group: "model",
		Params: []Param{
			intParam("l", "200", "training examples of the generated data", 1),
			intParam("d", "20", "features of the generated data", 1),
			{Name: "separation", Kind: Float, Default: "3", Help: "distance between the two Gaussian class means (unit variance)", HasMin: true},
			{Name: "C", Kind: Float, Default: "1", Help: "box bound C > 0 of the dual (the hinge loss weight)", HasMin: true, MinExcl: true},
			{Name: "data", Kind: Path, Format: "svmlight", Default: "", Help: "svmlight/LIBSVM file with labels ±1 (or 0/1); replaces the generated data"},
		},
		Algorithms: modelAlgorithms,
		Defaults:   modelDefaults(),
		Build:      buildSVMDual,
	})
}

// pathErr turns a data file error into a field error for the parameter; the
// message names the file (and line and column for malformed content).
func pathErr(param string, err error) error {
	return spec.Errorf("params."+param, "%v", err)
}

// loadXY reads the data of a GLM from the x/y or data parameters; ok is false
// when none is given (generated data).
func loadXY(v Values) (x *mat.Dense, y []float64, ySource string, ok bool, err error) {
	xp, yp, dp := v.Str("x"), v.Str("y"), v.Str("data")
	switch {
	case dp != "" && (xp != "" || yp != ""):
		return nil, nil, "", false, spec.Errorf("params.data", "give either data or x and y, not both")
	case dp != "":
		s, err := dataio.ReadSVMLight(dp)
		if err != nil {
			return nil, nil, "", false, pathErr("data", err)
		}
		if err := denseFits(dp, s); err != nil {
			return nil, nil, "", false, err
		}
		x, err := s.Dense(max(s.Dim, 1))
		if err != nil {
			return nil, nil, "", false, pathErr("data", fmt.Errorf("%s: %w", dp, err))
		}
		return x, s.Labels, dp, true, nil
	case xp == "" && yp == "":
		return nil, nil, "", false, nil
	case xp == "":
		return nil, nil, "", false, spec.Errorf("params.x", "is needed with y (the design matrix as CSV)")
	case yp == "":
		return nil, nil, "", false, spec.Errorf("params.y", "is needed with x (the responses as CSV)")
	}
	x, err = dataio.ReadCSV(xp)
	if err != nil {
		return nil, nil, "", false, pathErr("x", err)
	}
	y, err = dataio.ReadVector(yp)
	if err != nil {
		return nil, nil, "", false, pathErr("y", err)
	}
	if r, _ := x.Dims(); r != len(y) {
		return nil, nil, "", false, spec.Errorf("params.y", "%s has %d responses, but %s has %d rows", yp, len(y), xp, r)
	}
	return x, y, yp, true, nil
}

// denseFits rejects svmlight data too large for the models' dense storage.
func denseFits(path string, s *dataio.SVMLight) error {
	if s.Rows()*max(s.Dim, 1) > maxEntries {
		return spec.Errorf("params.data", "%s: %d examples × %d features exceed the %d entries the dense models hold", path, s.Rows(), s.Dim, maxEntries)
	}
	return nil
}

func buildGLM(name string, loss glm.Loss) func(context.Context, Values, int64) (Instance, error) {
	return func(ctx context.Context, v Values, seed int64) (Instance, error) {
		x, y, ySource, imported, err := loadXY(v)
		if err != nil {
			return nil, errf(name, err)
		}
		panels := map[string]any{}
		if !imported {
			n, p, k := v.Int("n"), v.Int("p"), v.Int("k")
			if n*p > maxEntries {
				return nil, errf(name, spec.Errorf("params.n", "n·p = %d exceeds %d matrix entries (lower n or p)", n*p, maxEntries))
			}
			if k > p {
				return nil, errf(name, spec.Errorf("params.k", "must be at most p = %d, got %d", p, k))
			}
			s, err := glm.Generate(loss, n, p, k, v.Float("noise"), seed)
			if err != nil {
				return nil, errf(name, err)
			}
			x, y = s.X, s.Y
			panels["support_true"] = s.Support
			panels["beta_true"] = s.BetaTrue
			panels["data"] = "generated"
		} else {
			panels["data"] = "imported"
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lam := v.Float("lambda")
		// λ_max does not depend on λ: compute it on a provisional instance,
		// then share its data with the real one.
		// the slack parameter is applied per algorithm (FWInstance.Slack,
		// solver.Config.KeepSlack), so the problem itself can collapse
		probe, err := glm.New(glm.Config{Loss: loss, X: x, Y: y, Lambda: 1, YSource: ySource})
		if err != nil {
			return nil, errf(name, spec.Errorf(yField(v), "%v", err))
		}
		lmax := probe.LambdaMax()
		if lam == 0 {
			lam = lambdaAutoFrac(loss) * lmax
			if !(lam > 0) {
				return nil, errf(name, spec.Errorf("params.lambda", "λ_max of the data is 0 (β* = 0 for every λ); give lambda > 0 explicitly"))
			}
		}
		pr, err := probe.WithLambda(lam, v.Float("T"))
		if err != nil {
			field := "params.lambda"
			if strings.HasPrefix(err.Error(), "T:") {
				field = "params.T"
			}
			return nil, spec.Errorf(field, "%s", strings.TrimSpace(err.Error()[strings.Index(err.Error(), ":")+1:]))
		}
		panels["lambda"] = lam
		panels["lambda_max"] = lmax
		panels["T"] = pr.T()
		panels["T_safe"] = pr.SafeT()
		p := pr.P()
		return &FWInstance{
			Problem:      pr,
			Prox:         pr,
			Meta:         Info{Dim: pr.Dim(), Samples: pr.Samples(), Blocks: 1, Panels: panels},
			Solution:     func(x []float64) [][]float64 { return column(x[:p]) },
			Coefficients: true,
			Slack:        v.Str("slack"),
		}, nil
	}
}

func yField(v Values) string {
	if v.Str("data") != "" {
		return "params.data"
	}
	if v.Str("y") != "" {
		return "params.y"
	}
	return "params"
}

func buildSVMDual(ctx context.Context, v Values, seed int64) (Instance, error) {
	var (
		z      *mat.Dense
		y      []float64
		source string
	)
	panels := map[string]any{}
	if dp := v.Str("data"); dp != "" {
		s, err := dataio.ReadSVMLight(dp)
		if err != nil {
			return nil, errf("svm-dual", pathErr("data", err))
		}
		if err := denseFits(dp, s); err != nil {
			return nil, errf("svm-dual", err)
		}
		z, err = s.Dense(max(s.Dim, 1))
		if err != nil {
			return nil, errf("svm-dual", pathErr("data", fmt.Errorf("%s: %w", dp, err)))
		}
		y, source = s.Labels, dp
		panels["data"] = "imported"
	} else {
		if l, d := v.Int("l"), v.Int("d"); l*d > maxEntries {
			return nil, errf("svm-dual", spec.Errorf("params.l", "l·d = %d exceeds %d matrix entries (lower l or d)", l*d, maxEntries))
		}
		var err error
		z, y, err = svmdual.Generate(v.Int("l"), v.Int("d"), v.Float("separation"), seed)
		if err != nil {
			return nil, errf("svm-dual", err)
		}
		panels["data"] = "generated"
	}
	pr, err := svmdual.New(z, y, v.Float("C"), source)
	if err != nil {
		field := "params"
		if source != "" {
			field = "params.data"
		}
		return nil, errf("svm-dual", spec.Errorf(field, "%v", err))
	}
	panels["C"] = pr.C()
	return &FWInstance{
		Problem: pr,
		Prox:    pr,
		Meta:    Info{Dim: pr.Dim(), Samples: pr.Samples(), Blocks: 1, Panels: panels},
		// the dual's α, one per example
		Coefficients: true,
	}, nil
}

var (
	_ solver.Evaluator = (*glm.Problem)(nil)
	_ solver.Evaluator = (*svmdual.Problem)(nil)
)
