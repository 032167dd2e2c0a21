package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// countName is a scenario that counts its builds: q blocks, n samples,
// optionally a panic, a field error or a slow build.
const countName = "test-preview-count"

var (
	countBuilds  atomic.Int64
	registerOnce sync.Once
)

type countInstance struct{ q, n int }

func (c countInstance) Info() scenarios.Info {
	f := 0.5
	return scenarios.Info{Dim: 3 * c.q, Samples: c.n, Blocks: c.q, FStar: &f, Panels: map[string]any{"big": make([]float64, 100)}}
}

func (c countInstance) Method(spec.Algo, solver.Limits, int64) (solver.Method, error) {
	return nil, errors.New("the preview scenario runs nothing")
}

func registerCount() {
	registerOnce.Do(func() {
		scenarios.Register(&scenarios.Scenario{
			Name: countName, Title: "Counted builds", Group: "test",
			Params: []scenarios.Param{
				{Name: "q", Kind: scenarios.Int, Default: "2", Help: "blocks", Min: 1, HasMin: true},
				{Name: "n", Kind: scenarios.Int, Default: "10", Help: "samples", Min: 1, HasMin: true},
				{Name: "panic", Kind: scenarios.Bool, Default: "false", Help: "panic in Build"},
				{Name: "bad", Kind: scenarios.Bool, Default: "false", Help: "Build fails naming params.n"},
				{Name: "sleep_ms", Kind: scenarios.Int, Default: "0", Help: "Build sleeps this long", Min: 0, HasMin: true},
			},
			Algorithms: []string{"fw"},
			Build: func(ctx context.Context, v scenarios.Values, seed int64) (scenarios.Instance, error) {
				countBuilds.Add(1)
				if v.Bool("panic") {
					panic("preview test: boom")
				}
				if v.Bool("bad") {
					return nil, spec.Errorf("params.n", "must be even for this instance, got %d", v.Int("n"))
				}
				if d := v.Int("sleep_ms"); d > 0 {
					time.Sleep(time.Duration(d) * time.Millisecond)
				}
				return countInstance{q: v.Int("q"), n: v.Int("n") + int(seed)}, nil
			},
		})
	})
}

func init() { registerCount() }

type previewAnswer struct {
	Dim     int      `json:"dim"`
	Samples int      `json:"samples"`
	Blocks  int      `json:"blocks"`
	FStar   *float64 `json:"fstar"`
	Error   string   `json:"error"`
	Field   string   `json:"field"`
}

func preview(t testing.TB, url, body string) (int, previewAnswer, map[string]any) {
	t.Helper()
	code, b := do(t, http.MethodPost, url+"/api/preview", []byte(body))
	var a previewAnswer
	var raw map[string]any
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("preview %s: %d %s: %v", body, code, b, err)
	}
	_ = json.Unmarshal(b, &raw)
	return code, a, raw
}

func TestPreviewGood(t *testing.T) {
	_, ts := newTestServer(t, Options{})

	// toy-polygon: one block, F* unknown → null (present, not omitted).
	code, a, raw := preview(t, ts.URL, `{"problem":"toy-polygon"}`)
	if code != 200 || a.Blocks != 1 || a.Dim < 2 {
		t.Fatalf("toy-polygon preview: %d %+v", code, a)
	}
	tp, _ := scenarios.Lookup("toy-polygon")
	vals, _ := tp.Values(nil)
	inst, err := tp.Build(context.Background(), vals, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info := inst.Info(); a.Dim != info.Dim || a.Samples != info.Samples || a.Blocks != info.Blocks {
		t.Errorf("toy-polygon preview %+v, instance %+v", a, info)
	}
	if _, ok := raw["fstar"]; !ok {
		t.Errorf("fstar missing from %v (want a number or null)", raw)
	}
	if _, ok := raw["panels"]; ok {
		t.Errorf("the preview carries panels: %v", raw)
	}

	// gflasso defaults: q is the number of connected components of the
	// task graph, as the instance's own panels list them.
	for _, tc := range []struct {
		params string
		seed   int64
	}{{`{}`, 1}, {`{"threshold":"0.2"}`, 1}, {`{"threshold":"0.95"}`, 2}} {
		body := fmt.Sprintf(`{"problem":"gflasso","params":%s,"seed":%d}`, tc.params, tc.seed)
		code, a, _ := preview(t, ts.URL, body)
		if code != 200 {
			t.Fatalf("%s: %d %+v", body, code, a)
		}
		var given spec.Params
		if err := json.Unmarshal([]byte(tc.params), &given); err != nil {
			t.Fatal(err)
		}
		g, _ := scenarios.Lookup("gflasso")
		vals, err := g.Values(given)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := g.Build(context.Background(), vals, tc.seed)
		if err != nil {
			t.Fatal(err)
		}
		info := inst.Info()
		comps, ok := info.Panels["components"].([][]int)
		if !ok {
			t.Fatalf("gflasso panels have no components: %T", info.Panels["components"])
		}
		if a.Blocks != len(comps) || a.Dim != info.Dim || a.Samples != info.Samples {
			t.Errorf("%s: preview %+v; instance p=%d n=%d and %d components", body, a, info.Dim, info.Samples, len(comps))
		}
		t.Logf("%s: p = %d, n = %d, q = %d", body, a.Dim, a.Samples, a.Blocks)
	}

	// The answer of the test scenario: q, n + seed, F*.
	code, a, _ = preview(t, ts.URL, `{"problem":"`+countName+`","params":{"q":"7","n":"4"},"seed":5}`)
	if code != 200 || a.Blocks != 7 || a.Samples != 9 || a.Dim != 21 || a.FStar == nil || *a.FStar != 0.5 {
		t.Errorf("counted scenario: %d %+v", code, a)
	}
}

// TestPreviewErrorsMatchRuns: every refused preview answers 400 with the
// field and message POST /api/runs gives for the same problem and params.
func TestPreviewErrorsMatchRuns(t *testing.T) {
	_, ts := newTestServer(t, Options{DataDir: t.TempDir()})
	cases := []struct {
		name, problem, params string
		seed                  int64
		field                 string
	}{
		{"unknown problem", "no-such-problem", `{}`, 0, "problem"},
		{"empty problem", "", `{}`, 0, "problem"},
		{"below the minimum", "toy-polygon", `{"vertices":"2"}`, 0, "params.vertices"},
		{"not a number", "gflasso", `{"threshold":"lots"}`, 0, "params.threshold"},
		{"above the maximum", "gflasso", `{"threshold":"1.5"}`, 0, "params.threshold"},
		{"unknown parameter", "gflasso", `{"thresold":"0.5"}`, 0, "params.thresold"},
		{"path outside the data directory", "gflasso", `{"x":"../../etc/passwd","y":"y.csv"}`, 0, "params.x"},
		{"negative seed", "toy-polygon", `{}`, -1, "seed"},
		{"build names a field", countName, `{"bad":"true"}`, 0, "params.n"},
		{"collinear points", "toy-polygon", `{"points":"0,0;1,1;2,2"}`, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"problem":%q,"params":%s,"seed":%d}`, tc.problem, tc.params, tc.seed)
			code, a, _ := preview(t, ts.URL, body)
			if code != 400 {
				t.Fatalf("%s: %d %+v, want 400", body, code, a)
			}
			if tc.field != "" && a.Field != tc.field {
				t.Errorf("field %q, want %q (%s)", a.Field, tc.field, a.Error)
			}
			algo := "fw"
			if sc, ok := scenarios.Lookup(tc.problem); ok {
				algo = sc.Algorithms[0]
			}
			run := fmt.Sprintf(`{"problem":%q,"params":%s,"seed":%d,"algorithms":[{"algo":%q}]}`, tc.problem, tc.params, tc.seed, algo)
			rc, rb := do(t, http.MethodPost, ts.URL+"/api/runs", []byte(run))
			var re apiError
			if err := json.Unmarshal(rb, &re); err != nil || rc != 400 {
				t.Fatalf("run %s: %d %s", run, rc, rb)
			}
			if re.Field != a.Field || re.Error != a.Error {
				t.Errorf("preview says %s: %q; a run says %s: %q", a.Field, a.Error, re.Field, re.Error)
			}
		})
	}

	// Malformed bodies.
	for _, body := range []string{``, `{`, `{"problem":"toy-polygon","algorithms":[]}`, `{"problem":"toy-polygon"} {}`, `{"problem":"toy-polygon","seed":"x"}`} {
		code, a, _ := preview(t, ts.URL, body)
		if code != 400 || a.Error == "" {
			t.Errorf("body %q: %d %+v, want 400 with a message", body, code, a)
		}
	}
	if code, _ := do(t, http.MethodGet, ts.URL+"/api/preview", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/preview: %d, want 405", code)
	}
}

func TestPreviewPanicIsAnError(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	code, a, _ := preview(t, ts.URL, `{"problem":"`+countName+`","params":{"panic":"true"}}`)
	if code != 400 || a.Field != "problem" || a.Error == "" {
		t.Fatalf("panicking build: %d %+v", code, a)
	}
	// The server still answers.
	if code, a, _ := preview(t, ts.URL, `{"problem":"`+countName+`"}`); code != 200 || a.Blocks != 2 {
		t.Fatalf("after the panic: %d %+v", code, a)
	}
}

// TestPreviewCache: the same (problem, values, seed) is built once, even
// when the parameters are spelled differently (a default given explicitly,
// spaces); a different seed or value is built; beyond PreviewCache keys the
// oldest is forgotten.
func TestPreviewCache(t *testing.T) {
	srv, ts := newTestServer(t, Options{PreviewCache: 3})
	builds := func() int64 { return countBuilds.Load() }
	ask := func(params string, seed int64) previewAnswer {
		t.Helper()
		code, a, _ := preview(t, ts.URL, fmt.Sprintf(`{"problem":%q,"params":%s,"seed":%d}`, countName, params, seed))
		if code != 200 {
			t.Fatalf("%s seed %d: %d %+v", params, seed, code, a)
		}
		return a
	}
	b0, s0 := builds(), srv.previews.Builds()
	first := ask(`{"q":"4"}`, 1)
	if builds() != b0+1 {
		t.Fatalf("first preview: %d builds", builds()-b0)
	}
	for _, same := range []string{`{"q":"4"}`, `{"q":" 4 ","n":"10"}`, `{"q":"4","panic":"false"}`} {
		if a := ask(same, 1); !samePreview(a, first) {
			t.Errorf("%s: %+v, cached answer %+v", same, a, first)
		}
	}
	if builds() != b0+1 {
		t.Errorf("the same instance asked 4 times was built %d times", builds()-b0)
	}
	if a := ask(`{"q":"4"}`, 2); a.Samples != 12 || builds() != b0+2 {
		t.Errorf("another seed: %+v after %d builds", a, builds()-b0)
	}
	ask(`{"q":"5"}`, 1) // 3 keys cached: q4s1, q4s2, q5s1
	ask(`{"q":"4"}`, 1) // hit: q4s1 becomes the most recent
	if builds() != b0+3 {
		t.Errorf("%d builds, want 3", builds()-b0)
	}
	ask(`{"q":"6"}`, 1) // evicts q4s2, the least recently used
	ask(`{"q":"4"}`, 1) // still cached
	if builds() != b0+4 {
		t.Errorf("%d builds, want 4", builds()-b0)
	}
	ask(`{"q":"4"}`, 2) // evicted: built again
	if builds() != b0+5 {
		t.Errorf("%d builds, want 5", builds()-b0)
	}
	if got := srv.previews.Builds() - s0; got != 5 {
		t.Errorf("the server counted %d builds, want 5", got)
	}

	// Concurrent requests for one new key share one build.
	b1 := builds()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, b := do(t, http.MethodPost, ts.URL+"/api/preview", []byte(`{"problem":"`+countName+`","params":{"q":"9","sleep_ms":"50"}}`))
			if code != 200 {
				t.Errorf("concurrent preview: %d %s", code, b)
			}
		}()
	}
	wg.Wait()
	if n := builds() - b1; n != 1 {
		t.Errorf("6 concurrent previews of one instance built it %d times", n)
	}

	// Failures are not cached: a failing instance is built each time.
	b2 := builds()
	for range 2 {
		if code, _, _ := preview(t, ts.URL, `{"problem":"`+countName+`","params":{"bad":"true"}}`); code != 400 {
			t.Fatalf("bad instance: %d", code)
		}
	}
	if n := builds() - b2; n != 2 {
		t.Errorf("a failing instance asked twice was built %d times", n)
	}
}

// TestPreviewTimeout: a build slower than PreviewTimeout answers 504; the
// build goes on and its answer is cached for the next request.
func TestPreviewTimeout(t *testing.T) {
	_, ts := newTestServer(t, Options{PreviewTimeout: 100 * time.Millisecond})
	body := `{"problem":"` + countName + `","params":{"q":"3","sleep_ms":"400"}}`
	code, a, _ := preview(t, ts.URL, body)
	if code != http.StatusGatewayTimeout || a.Error == "" {
		t.Fatalf("slow build: %d %+v, want 504", code, a)
	}
	// The build finished in the background (its own deadline does not
	// interrupt a Build that ignores its context).
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, a, _ = preview(t, ts.URL, body)
		if code == 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 200 || a.Blocks != 3 {
		t.Fatalf("after the slow build: %d %+v", code, a)
	}
}

func samePreview(a, b previewAnswer) bool {
	return a.Dim == b.Dim && a.Samples == b.Samples && a.Blocks == b.Blocks &&
		(a.FStar == nil) == (b.FStar == nil) && (a.FStar == nil || *a.FStar == *b.FStar)
}

func FuzzPreview(f *testing.F) {
	_, ts := newTestServer(f, Options{})
	for _, s := range []string{`{"problem":"toy-polygon"}`, `{"problem":"toy-polygon","params":{"vertices":"` + strconv.Itoa(5) + `"},"seed":3}`, `{"problem":"x"}`, `{`, `[]`, `{"params":{"a":1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		code, b := do(t, http.MethodPost, ts.URL+"/api/preview", []byte(body))
		var e apiError
		switch code {
		case 200:
		case 400:
			if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
				t.Fatalf("400 without a message: %s", b)
			}
		default:
			t.Fatalf("body %q: status %d %s", body, code, b)
		}
	})
}

// BenchmarkPreviewGFLASSO measures a preview of the default GFLASSO
// instance answered from the cache against one that builds the instance (a
// new seed each time), in the same run, and reports their ratio.
func BenchmarkPreviewGFLASSO(b *testing.B) {
	_, ts := newTestServer(b, Options{})
	body := func(seed int) []byte { return []byte(fmt.Sprintf(`{"problem":"gflasso","seed":%d}`, seed)) }
	var cold, warm time.Duration
	seed := 1000
	for b.Loop() {
		seed++
		t0 := time.Now()
		if code, out := do(b, http.MethodPost, ts.URL+"/api/preview", body(seed)); code != 200 {
			b.Fatalf("%d %s", code, out)
		}
		t1 := time.Now()
		if code, out := do(b, http.MethodPost, ts.URL+"/api/preview", body(seed)); code != 200 {
			b.Fatalf("%d %s", code, out)
		}
		cold += t1.Sub(t0)
		warm += time.Since(t1)
	}
	b.ReportMetric(float64(cold.Microseconds())/float64(b.N), "build-µs/op")
	b.ReportMetric(float64(warm.Microseconds())/float64(b.N), "cached-µs/op")
	b.ReportMetric(float64(cold)/float64(warm), "build/cached")
}
