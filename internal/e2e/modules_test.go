package e2e

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDecimatorKeepsExtremes checks the page's decimation on 10⁵ points fed
// in streaming chunks: spikes and dips survive, the first records are all
// kept (log-x needs them), the output is bounded and sorted, streaming and
// one-shot feeding agree, a log axis never gets a non-positive value, and
// an offset applied when reading equals one applied to the data.
func TestDecimatorKeepsExtremes(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.Decimator)`, ``, 10*time.Second)
	type result struct {
		Count      int    `json:"count"`
		Spikes     []bool `json:"spikes"`
		Dip        bool   `json:"dip"`
		Sorted     bool   `json:"sorted"`
		First      bool   `json:"first"`
		Same       bool   `json:"same"`
		LogOK      bool   `json:"logOK"`
		LogCount   int    `json:"logCount"`
		MaxBucket  int    `json:"maxBucket"`
		OffsetSame bool   `json:"offsetSame"`
	}
	r := eval[result](t, ctx, `(() => {
		const n = 100000, v = new Float64Array(n);
		for (let i = 0; i < n; i++) v[i] = Math.sin(i / 500) + 2 + (i % 97) * 1e-3;
		const spikes = [137, 5000, 33333, 77777, 99998];
		for (const i of spikes) v[i] = 100 + i;
		v[4242] = -50;
		const src = { v, lo: v, hi: v };
		const d = new fwlab.Decimator(1000);
		for (let k = 0; k < n; k += 7919) d.feed(src, Math.min(n, k + 7919));
		const idx = [];
		d.points((i) => idx.push(i));
		const d2 = new fwlab.Decimator(1000);
		d2.feed(src, n);
		const idx2 = [];
		d2.points((i) => idx2.push(i));
		const set = new Set(idx);
		const w = new Float64Array(n);
		for (let i = 0; i < n; i++) w[i] = i % 3 === 0 ? 0 : i % 3 === 1 ? -1 : 1 + i;
		const dl = new fwlab.Decimator(1000);
		dl.feed({ v: w, lo: w, hi: w }, n);
		let logOK = true, logCount = 0;
		dl.points((i, y, lo, hi) => { logCount++; if (!(y > 0 && lo > 0 && hi > 0)) logOK = false; }, 0, true);
		// Reading with an offset c equals decimating v − c (the buckets keep
		// their extremes either way).
		const c = 1.5, vs = v.map((x) => x - c);
		const a = [], b = [];
		const da = new fwlab.Decimator(1000); da.feed(src, n); da.points((i, y) => a.push([i, y]), c, false);
		const db = new fwlab.Decimator(1000); db.feed({ v: vs, lo: vs, hi: vs }, n); db.points((i, y) => b.push([i, y]), 0, false);
		const offsetSame = a.length === b.length && a.every((p, j) => p[0] === b[j][0] && Math.abs(p[1] - b[j][1]) < 1e-9);
		return {
			count: idx.length,
			spikes: spikes.map((i) => set.has(i)),
			dip: set.has(4242),
			sorted: idx.every((x, j) => j === 0 || x > idx[j - 1]),
			first: Array.from({ length: 16 }, (_, i) => i).every((i) => set.has(i)),
			same: JSON.stringify(idx) === JSON.stringify(idx2),
			logOK, logCount, maxBucket: d.s, offsetSame,
		};
	})()`)
	if r.Count == 0 || r.Count > 2*1000+2 {
		t.Errorf("%d points kept of 10⁵ (target 1000 buckets, two points each)", r.Count)
	}
	for i, ok := range r.Spikes {
		if !ok {
			t.Errorf("spike %d lost", i)
		}
	}
	if !r.Dip || !r.Sorted || !r.First || !r.Same {
		t.Errorf("dip kept %v, sorted %v, first records kept %v, streaming = one-shot %v", r.Dip, r.Sorted, r.First, r.Same)
	}
	if !r.LogOK || r.LogCount == 0 {
		t.Errorf("log source: %d points, all positive: %v", r.LogCount, r.LogOK)
	}
	if !r.OffsetSame {
		t.Error("reading with an offset differs from decimating the shifted data")
	}
	t.Logf("10⁵ points → %d kept, bucket size %d", r.Count, r.MaxBucket)

	// Axis tick labels: tiny values on log axes are not printed as "0".
	ticks := map[string]string{"1e-6": "1e-6", "3e-5": "3.0e-5", "1e-12": "1e-12", "0.5": "0.5", "0": "0", "250": "250", "1e6": "1e6", "0.001": "0.001", "-2e-7": "-2.0e-7"}
	for in, want := range ticks {
		if got := eval[string](t, ctx, `fwlab.fmtNum(`+in+`)`); got != want {
			t.Errorf("tick label of %s = %q, want %q", in, got, want)
		}
	}
}

// TestPureModules runs the page's logic that needs no page (smoothing,
// event density, the schedule preview and its axes, the rules of the
// algorithm rows, metric names, the teaching view's step in words) in the
// browser, against values computed here independently.
func TestPureModules(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.modules)`, ``, 10*time.Second)

	t.Run("ema", func(t *testing.T) {
		ys := []float64{1, 2, 4, 8, 16, 32}
		for _, w := range []float64{0, 0.5, 0.9} {
			for _, log := range []bool{false, true} {
				got := eval[[]float64](t, ctx, fmt.Sprintf(`fwlab.ema([1, 2, null, 4, 8, 16, 32], %v, %v).filter((x) => x != null)`, w, log))
				// The debiased EMA, computed here.
				acc, norm := 0.0, 0.0
				for i, y := range ys {
					v := y
					if log {
						v = math.Log(y)
					}
					acc = w*acc + (1-w)*v
					norm = w*norm + (1 - w)
					m := acc / norm
					if log {
						m = math.Exp(m)
					}
					if i >= len(got) || math.Abs(got[i]-m) > 1e-9*math.Abs(m) {
						t.Fatalf("ema(w=%v, log=%v) = %v; at %d want %v", w, log, got, i, m)
					}
				}
			}
		}
		if n := eval[int](t, ctx, `fwlab.ema([1, null, 3], 0.5, false).filter((x) => x === null).length`); n != 1 {
			t.Errorf("a missing value is filled: %d nulls", n)
		}
		if n := eval[int](t, ctx, `fwlab.ema([1, 0, -2, 3], 0.5, true).filter((x) => x === null).length`); n != 2 {
			t.Errorf("log smoothing keeps %d non-positive values, want them missing", 4-n)
		}
	})

	t.Run("events", func(t *testing.T) {
		type bins struct {
			Dense bool `json:"dense"`
			Max   int  `json:"max"`
			N     int  `json:"n"`
		}
		for _, c := range []struct {
			xs    string
			dense bool
			max   int
		}{
			{`[1, 10, 20, 30]`, false, 1},
			{`[1, 2, 10]`, true, 2},
			{`Array.from({length: 300}, (_, i) => i * 0.5)`, true, 6},
		} {
			got := eval[bins](t, ctx, `(() => { const b = fwlab.binEvents(`+c.xs+`, 3); return {dense: b.dense, max: b.max, n: b.bins.size}; })()`)
			if got.Dense != c.dense || got.Max != c.max {
				t.Errorf("binEvents(%s) = %+v, want dense %v, max %d", c.xs, got, c.dense, c.max)
			}
		}
	})

	t.Run("schedule", func(t *testing.T) {
		// m_k = ceil(n / (1 + n (1 − ρ)^{2αk})), computed here.
		n, rho, alpha := 1000.0, 0.1, 0.5
		got := eval[struct {
			K int   `json:"K"`
			M []int `json:"m"`
		}](t, ctx, `fwlab.previewSeries({kind: 'paper', rho: 0.1, alpha: 0.5}, 1000, 400)`)
		if len(got.M) != got.K || got.K%10 != 0 {
			t.Fatalf("preview K = %d with %d values", got.K, len(got.M))
		}
		for k := 1; k <= got.K; k++ {
			want := int(math.Ceil(n / (1 + n*math.Pow(1-rho, 2*alpha*float64(k)))))
			if got.M[k-1] != want {
				t.Errorf("m_%d = %d, want %d", k, got.M[k-1], want)
			}
		}
		if got.M[got.K-1] != 1000 || got.M[got.K-11] == 1000 {
			t.Errorf("the preview should end where the batch first fills: m_K = %d, m_(K-10) = %d", got.M[got.K-1], got.M[got.K-11])
		}
		for _, c := range []struct {
			lo, hi float64
			n      int
		}{{0, 1000, 3}, {1, 60, 5}, {0, 0.37, 4}, {1, 400, 5}} {
			ticks := eval[[]float64](t, ctx, fmt.Sprintf(`fwlab.niceTicks(%v, %v, %d)`, c.lo, c.hi, c.n))
			if len(ticks) < 2 || len(ticks) > 2*c.n+2 {
				t.Errorf("niceTicks(%v, %v, %d) = %v", c.lo, c.hi, c.n, ticks)
				continue
			}
			step := ticks[1] - ticks[0]
			mant := step / math.Pow(10, math.Floor(math.Log10(step)))
			if math.Abs(mant-1) > 1e-9 && math.Abs(mant-2) > 1e-9 && math.Abs(mant-5) > 1e-9 {
				t.Errorf("niceTicks(%v, %v) step %v is not 1, 2 or 5 times a power of ten", c.lo, c.hi, step)
			}
			for i, v := range ticks {
				if v < c.lo-1e-9 || v > c.hi+1e-9 || (i > 0 && math.Abs(v-ticks[i-1]-step) > 1e-9*step) {
					t.Errorf("niceTicks(%v, %v) = %v", c.lo, c.hi, ticks)
					break
				}
			}
		}
	})

	t.Run("rows", func(t *testing.T) {
		// Which controls a row shows: spg and the structural SVM solvers
		// set their own step; fista and pgd take L and backtracking.
		for _, c := range []struct {
			algo, problem string
			stepsize, l   bool
		}{
			{"spg", "gflasso", false, false},
			{"bc-ssfw-as", "gflasso", true, true},
			{"fista", "toy-polygon", true, true},
			{"afw", "lasso", true, true},
			{"bcfw", "ssvm-ocr", false, false},
			{"ssg", "ssvm-chain", false, false},
			{"cd", "lasso", false, false},
		} {
			got := eval[map[string]bool](t, ctx, fmt.Sprintf(`fwlab.uses(%q, false, %q, fwlab.catalogue)`, c.algo, c.problem))
			if got["stepsize"] != c.stepsize || got["L"] != c.l {
				t.Errorf("uses(%s on %s) = %v, want stepsize %v, L %v", c.algo, c.problem, got, c.stepsize, c.l)
			}
		}
		// cd's spec names no step-size rule and no L (the server rejects any
		// but the defaults), and its menu entry says it is not the paper's.
		if got := eval[map[string]string](t, ctx, `fwlab.specRule({algo: 'cd', stepsize: 'backtrack', L: '3'}, fwlab.catalogue)`); len(got) != 0 {
			t.Errorf("specRule(cd) = %v, want no stepsize and no L", got)
		}
		if got := eval[map[string]string](t, ctx, `fwlab.specRule({algo: 'fista', stepsize: 'backtrack', L: '3'}, fwlab.catalogue)`); got["stepsize"] != "backtrack" || got["L"] != "3" {
			t.Errorf("specRule(fista) = %v", got)
		}
		if got := eval[string](t, ctx, `fwlab.algoText('cd', fwlab.catalogue)`); got != "cd (baseline, not in the paper)" {
			t.Errorf("algoText(cd) = %q", got)
		}
		// A row whose L is not used is not checked for it.
		if e := eval[map[string]string](t, ctx, `fwlab.checkAlgo({algo: 'spg', L: '-1', stepsize: 'curvature'}, false, 0, fwlab.uses('spg', false, 'gflasso', fwlab.catalogue), fwlab.catalogue)`); len(e) != 0 {
			t.Errorf("spg row with an unused L = -1: %v", e)
		}
		if e := eval[map[string]string](t, ctx, `fwlab.checkAlgo({algo: 'afw', L: '-1', stepsize: 'curvature'}, false, 0, fwlab.uses('afw', false, 'lasso', fwlab.catalogue), fwlab.catalogue)`); e["L"] == "" {
			t.Errorf("afw row with L = -1 passes: %v", e)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		// Every metric a problem reports has a human title and an
		// explanation (the list: the keys of the problems' Extra).
		for _, k := range []string{"dist_xstar", "kkt", "nnz", "t_slack", "train_acc", "support", "loss", "l1", "fusion", "p1_objective", "t_fill", "primal", "primal_plain", "dual", "dual_plain", "gap_plain", "rel_gap", "test_err", "test_err_avg", "train_err", "train_err_avg"} {
			m := eval[map[string]any](t, ctx, fmt.Sprintf(`fwlab.metric(%q)`, k))
			title, _ := m["title"].(string)
			help, _ := m["help"].(string)
			if m["unknown"] == true || title == "" || title == k || title == strings.ReplaceAll(k, "_", " ") || len(help) < 20 {
				t.Errorf("metric %s: %v", k, m)
			}
		}
	})

	t.Run("plane", func(t *testing.T) {
		// A record of a 2-D run without the teaching view's points shows
		// those of the last record that carried them; its own metrics stay.
		got := eval[[]map[string]float64](t, ctx, `(() => {
			const t = new fwlab.Trace({}, true);
			t.push({k: 0, step: 'none', extra: {x0: 1, x1: 2}});
			t.push({k: 1, step: 'prox', extra: {x0: 3, x1: 4, at_x0: 5, at_x1: 6, from_x0: 7, from_x1: 8}});
			t.push({k: 2, step: 'prox'});
			t.push({k: 3, step: 'prox', objective: 1, extra: {dist_xstar: 0.5}});
			t.push({k: 4, step: 'prox', extra: {x0: 9, x1: 9, at_x0: 9, at_x1: 9, from_x0: 9, from_x1: 9}});
			t.push({k: 5, step: 'prox', extra: null});
			return t.extras;
		})()`)
		want := []map[string]float64{
			{"x0": 1, "x1": 2},
			{"x0": 3, "x1": 4, "at_x0": 5, "at_x1": 6, "from_x0": 7, "from_x1": 8},
			{"x0": 3, "x1": 4, "at_x0": 5, "at_x1": 6, "from_x0": 7, "from_x1": 8},
			{"x0": 3, "x1": 4, "at_x0": 5, "at_x1": 6, "from_x0": 7, "from_x1": 8, "dist_xstar": 0.5},
			{"x0": 9, "x1": 9, "at_x0": 9, "at_x1": 9, "from_x0": 9, "from_x1": 9},
			{"x0": 9, "x1": 9, "at_x0": 9, "at_x1": 9, "from_x0": 9, "from_x1": 9},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("extras %v, want %v", got, want)
		}
		if n := eval[int](t, ctx, `(() => { const t = new fwlab.Trace({}, true); t.push({k: 0, extra: {dist_xstar: 1}}); t.push({k: 1}); return t.extras.filter((e) => e && e.x0 != null).length; })()`); n != 0 {
			t.Errorf("a run without points got %d", n)
		}
	})

	t.Run("teaching", func(t *testing.T) {
		verts := `[{key: 'v0', x: 1, y: 0}, {key: 'v1', x: 0, y: 1}, {key: 'v2', x: -1, y: 0}, {key: 'v4', x: 0, y: -1}]`
		for _, c := range []struct{ rec, cur, prev, want string }{
			{`{k: 7, step: 'away', gamma: 0.075}`, `{away_x0: 0, away_x1: -1, fw_x0: 1, fw_x1: 0}`, `{'w:v4': 0.25, 'w:v0': 0.75}`, "away step from v4, γ = 0.075 ≤ γ_max = 0.333 (FW vertex v0 not taken)"},
			{`{k: 3, step: 'drop', gamma: 0.25}`, `{away_x0: -1, away_x1: 0}`, `{'w:v2': 0.2, 'w:v1': 0.8}`, "drop step: away from v2 with γ = 0.25 = γ_max = 0.25, so v2 leaves the active set"},
			{`{k: 1, step: 'fw', gamma: 0.5}`, `{fw_x0: 0, fw_x1: 1}`, `{'w:v0': 1}`, "FW step toward v1, γ = 0.5 ≤ γ_max = 1"},
			{`{k: 2, step: 'pairwise', gamma: 0.1}`, `{fw_x0: 0, fw_x1: 1, away_x0: 1, away_x1: 0}`, `{'w:v0': 0.4}`, "pairwise step: weight moves from v0 to v1, γ = 0.1 ≤ γ_max = 0.4"},
			{`{k: 0, step: 'none', gamma: 0}`, `{x0: -1, x1: 0}`, `null`, "start at v2"},
			{`{k: 4, step: 'prox', gamma: 0.25}`, `{x0: 0.5, x1: 0.5, from_x0: 0.75, from_x1: 0.5}`, `null`, "proximal step: gradient step to (0.75, 0.5), projected onto P at (0.5, 0.5) (step 1/L = 0.25)"},
			{`{k: 5, step: 'prox', gamma: 0.25}`, `{x0: 0.5, x1: 0.5, at_x0: 0.6, at_x1: 0.4, from_x0: 0.75, from_x1: 0.5}`, `null`, "proximal step: gradient step from (0.6, 0.4) to (0.75, 0.5), projected onto P at (0.5, 0.5) (step 1/L = 0.25)"},
		} {
			got := eval[string](t, ctx, `fwlab.describeStep(`+c.rec+`, `+c.cur+`, `+c.prev+`, `+verts+`)`)
			if got != c.want {
				t.Errorf("describeStep(%s) = %q, want %q", c.rec, got, c.want)
			}
		}
	})
}

// TestNoBrowserSkipsOrFails runs a browser test of this binary as on a
// machine without Chromium: it skips and says why, unless CI is set, when
// it fails.
func TestNoBrowserSkipsOrFails(t *testing.T) {
	t.Parallel()
	if os.Getenv("FWLAB_CHROMIUM") == "none" {
		t.Skip("already running without a browser")
	}
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestPureModules$", "-test.v", "-test.count=1")
		env := []string{"FWLAB_CHROMIUM=none"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "FWLAB_CHROMIUM=") {
				env = append(env, kv)
			}
		}
		if ci != "" {
			env = append(env, "CI="+ci)
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "--- SKIP: TestPureModules") || !strings.Contains(out, "no Chromium found") {
		t.Errorf("without a browser and CI: %v\n%s", err, out)
	}
	out, err = run("1")
	if err == nil || !strings.Contains(out, "--- FAIL: TestPureModules") || !strings.Contains(out, "CI is set, so this is a failure") {
		t.Errorf("without a browser, with CI: %v\n%s", err, out)
	}
}
