package scenarios

import (
	"context"
	"fmt"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// ssvmAlgorithms are the structural SVM's solvers.
var ssvmAlgorithms = spec.AlgorithmsFor("ssvm")

func ssvmDefaults() []spec.Algo { return []spec.Algo{{Algo: ssvm.AlgoBCFWAS}, {Algo: ssvm.AlgoBCFW}} }

func ssvmLambdaParam(def string) Param {
	return Param{Name: "lambda", Kind: Float, Default: def, Min: 0, Max: 1e6, HasMin: true, HasMax: true, MinExcl: true,
		Help: "regularisation λ of λ/2‖w‖² + (1/n)Σ hinge (used as given, no factor n)"}
}

func ssvmIntParam(name, def string, lo, hi float64, help string) Param {
	return Param{Name: name, Kind: Int, Default: def, Help: help, Min: lo, Max: hi, HasMin: true, HasMax: true}
}

func ssvmFloatParam(name, def string, lo, hi float64, help string) Param {
	return Param{Name: name, Kind: Float, Default: def, Help: help, Min: lo, Max: hi, HasMin: true, HasMax: true}
}

// SSVMInstance is a built structural SVM problem; its methods are bcfw,
// bcfw-as and ssg (not the solver package's P1 methods).
type SSVMInstance struct {
	Problem *ssvm.Problem
	Meta    Info
}

// Info returns the instance's description.
func (s *SSVMInstance) Info() Info { return s.Meta }

// Method configures bcfw, bcfw-as or ssg. The iterates are averaged unless
// a.NoAverage. With the run's default evaluation cadence (eval_every = 0)
// the full decoding passes behind the duality gap and the test error follow
// the default cadence (solver.Cadence, decided by counted work: about an
// eighth of the work, the first and last iterations always evaluated); any
// other eval_every is used as given, in iterations.
func (s *SSVMInstance) Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error) {
	p := s.Problem
	d := p.D
	if (a.Schedule == "constant" || a.Schedule == "geometric") && a.M0 > d {
		return nil, spec.Errorf("m0", "must be at most the feature dimension d = %d, got %d", d, a.M0)
	}
	method, alg := "", spec.AlgorithmByName(a.Algo)
	switch {
	case alg == nil:
		return nil, spec.Errorf("algo", "unknown algorithm %q", a.Algo)
	case alg.Family == "ssvm":
		method = alg.Method
	case alg.Family == "fw" && alg.Method == "fw" && alg.Blockwise && !alg.Stochastic:
		method = ssvm.AlgoBCFW // the structural SVM's own block-coordinate Frank-Wolfe
	default:
		return nil, spec.Errorf("algo", "%s does not apply to this problem: the structural SVM runs its own methods (bcfw-as, ssg) and block-coordinate Frank-Wolfe", a.Algo)
	}
	sched := solver.Schedule{Kind: a.Schedule, Rho: a.Rho, Alpha: a.Alpha, M0: a.M0, Growth: a.Growth}
	if !alg.Stochastic {
		sched = solver.Schedule{Kind: "full"}
	}
	m, err := p.NewMethod(ssvm.Options{Algo: method, Average: !a.NoAverage, Schedule: sched, Limits: lim, Seed: seed})
	if err != nil {
		return nil, spec.Errorf("algo", "%v", err)
	}
	return m, nil
}

var _ Instance = (*SSVMInstance)(nil)

func ssvmInfo(p *ssvm.Problem) Info {
	panel := map[string]any{
		"labels":        p.K,
		"features":      p.F,
		"train_words":   len(p.Train.Words),
		"train_letters": p.Train.Letters(),
		"lambda":        p.Lambda,
		"train_name":    p.Train.Name,
	}
	if p.Test != nil {
		panel["test_words"] = len(p.Test.Words)
		panel["test_letters"] = p.Test.Letters()
		panel["test_name"] = p.Test.Name
	}
	return Info{Dim: p.D, Samples: p.N(), Blocks: p.N(), Panels: map[string]any{"ssvm": panel}}
}

func init() {
	registerOCR()
	registerChain()
}

// registerOCR registers the structural SVM on the OCR data set.
func registerOCR() {
	Register(&Scenario{
		Name:  "ssvm-ocr",
		Title: "Structural SVM on OCR words",
		Help:  "Chain-structured SVM on Taskar's handwritten words (n = 6251 training words, d = 4082): Algorithm 4 (bcfw-as) against block-coordinate Frank-Wolfe, duality gap per effective pass as in the paper's Figure 2.",
		Group: "ssvm",
		// the step is the line search of Algorithm 4; the average is reported
		OwnSteps: true, Averages: true,
		Params: []Param{
			ssvmLambdaParam("0.01"),
			{Name: "data", Kind: Path, Format: "ocr", Default: "", Help: "OCR data: ocr_letters.tsv.gz or its directory (default: $" + ssvm.EnvOCR + ", else ../shared/data/ocr)"},
			{Name: "split", Kind: Choice, Default: "train", Choices: []string{"train", "small"},
				Help: "train: folds 1–9 train, fold 0 test (the paper's); small: the reverse"},
		},
		Algorithms: ssvmAlgorithms,
		Defaults:   ssvmDefaults(),
		// 30 effective passes (the paper's Figure 2 shows 20): an
		// evaluation decodes the data sets, for the iterate and its
		// average, at the cost of one to three passes, so a default run of
		// a fraction of a pass would be mostly its first and last
		// evaluations, and one of 30 passes spends about a tenth of its
		// time on them.
		Iters:  200000,
		Passes: 30,
		Build: func(_ context.Context, v Values, _ int64) (Instance, error) {
			c, err := ssvm.LoadOCR(v.Str("data"))
			if err != nil {
				return nil, spec.Errorf("params.data", "%v", err)
			}
			train, test, err := c.Split(v.Str("split"))
			if err != nil {
				return nil, spec.Errorf("params.split", "%v", err)
			}
			p, err := ssvm.NewProblem(train, test, v.Float("lambda"))
			if err != nil {
				return nil, errf("ssvm-ocr", err)
			}
			return &SSVMInstance{Problem: p, Meta: ssvmInfo(p)}, nil
		},
	})
}

// registerChain registers the structural SVM on a synthetic chain.
func registerChain() {
	def := ssvm.DefaultChain
	Register(&Scenario{
		Name:  "ssvm-chain",
		Title: "Structural SVM on synthetic chains",
		Help:  "A seeded synthetic stand-in for OCR: short words over a small alphabet, noisy letter features around per-label prototypes and a Markov chain of labels; runs with no data present.",
		Group: "ssvm",
		// the step is the line search of Algorithm 4; the average is reported
		OwnSteps: true, Averages: true,
		Params: []Param{
			ssvmLambdaParam("0.1"),
			ssvmIntParam("train", fmt.Sprint(def.Train), 1, 100000, "training words n (the dual's blocks)"),
			ssvmIntParam("test", fmt.Sprint(def.Test), 0, 100000, "test words"),
			ssvmIntParam("labels", fmt.Sprint(def.Labels), 2, 8, "alphabet size K"),
			ssvmIntParam("features", fmt.Sprint(def.Feat), 1, 256, "features per letter (a constant 1 is appended)"),
			ssvmIntParam("minlen", fmt.Sprint(def.MinLen), 1, 12, "shortest word"),
			ssvmIntParam("maxlen", fmt.Sprint(def.MaxLen), 1, 12, "longest word (≥ minlen)"),
			ssvmFloatParam("noise", fmt.Sprint(def.Noise), 0, 100, "standard deviation of the letter features around their label's prototype"),
			ssvmFloatParam("stick", fmt.Sprint(def.Stick), 0, 1, "probability that a letter's label is its predecessor's preferred successor"),
		},
		Algorithms: ssvmAlgorithms,
		Defaults:   ssvmDefaults(),
		Build: func(_ context.Context, v Values, seed int64) (Instance, error) {
			if v.Int("maxlen") < v.Int("minlen") {
				return nil, spec.Errorf("params.maxlen", "must be at least minlen = %d, got %d", v.Int("minlen"), v.Int("maxlen"))
			}
			// The letters' features are held in memory: bound them as the
			// generated matrices of the other problems are.
			if e := (v.Int("train") + v.Int("test")) * v.Int("maxlen") * (v.Int("features") + 1); e > maxEntries {
				return nil, spec.Errorf("params.train", "(train + test)·maxlen·(features + 1) = %d exceeds %d letter-feature entries (lower train, test, maxlen or features)", e, maxEntries)
			}
			cfg := ssvm.ChainConfig{Train: v.Int("train"), Test: v.Int("test"), Labels: v.Int("labels"),
				Feat: v.Int("features"), MinLen: v.Int("minlen"), MaxLen: v.Int("maxlen"),
				Noise: v.Float("noise"), Stick: v.Float("stick"), Seed: uint64(seed)}
			train, test, err := ssvm.Chain(cfg)
			if err != nil {
				return nil, errf("ssvm-chain", err)
			}
			p, err := ssvm.NewProblem(train, test, v.Float("lambda"))
			if err != nil {
				return nil, errf("ssvm-chain", err)
			}
			return &SSVMInstance{Problem: p, Meta: ssvmInfo(p)}, nil
		},
	})
	for _, f := range []struct {
		name, lambda, which string
	}{
		{"paper-fig2", "0.01", "the middle panel, λ = 0.01 (solve -scenario paper-fig2 -out FILE draws all three panels)"},
		{"paper-fig2-l005", "0.05", "the left panel, λ = 0.05: the most regularised, where both converge fastest"},
		{"paper-fig2-l0001", "0.001", "the right panel, λ = 0.001: the least regularised, where an accurate solution takes longest and away steps should matter most"},
	} {
		RegisterPreset(&Preset{
			Name:  f.name,
			Title: "Paper Figure 2: structural SVM on OCR, λ = " + f.lambda,
			Help:  "Paper Figure 2, " + f.which + ": bcfw-as (Algorithm 4) against bcfw on the OCR words for 20 effective passes, the duality gap of the averaged iterates evaluated every quarter pass.",
			Spec: spec.Run{
				Problem:    "ssvm-ocr",
				Params:     spec.Params{"lambda": f.lambda},
				Algorithms: ssvmDefaults(),
				Iters:      200000,
				Passes:     20,
				EvalEvery:  1563,
			},
		})
	}
}

// Figure2Options configures Figure2; see ssvm.Figure2Options.
type Figure2Options = ssvm.Figure2Options

// Figure2 reproduces the paper's Figure 2: duality gap and relative gap
// against effective passes for bcfw and bcfw-as on OCR at λ = 0.05, 0.01 and
// 0.001 (by default), as JSON-encodable data.
func Figure2(ctx context.Context, o Figure2Options) (*ssvm.Figure2Data, error) {
	return ssvm.Figure2(ctx, o)
}
