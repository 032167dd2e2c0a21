package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/web/templates"
)

// fakeCatalogue is a small registry-independent catalogue: two groups, one
// unknown group, every parameter kind.
func fakeCatalogue() ([]*scenarios.Scenario, []*scenarios.Preset) {
	build := func(context.Context, scenarios.Values, int64) (scenarios.Instance, error) { return nil, nil }
	list := []*scenarios.Scenario{
		{
			Name: "toy-polygon", Title: "Quadratic over a polygon", Group: "toy", Help: "A polygon & its <level> sets.",
			Params: []scenarios.Param{
				{Name: "vertices", Kind: scenarios.Int, Default: "6", Help: "vertex count", Min: 3, Max: 64, HasMin: true, HasMax: true},
				{Name: "target", Kind: scenarios.Choice, Default: "edge", Help: "where the centre lies", Choices: []string{"outside", "edge", "inside"}},
				{Name: "noise", Kind: scenarios.Float, Default: "0.3", Help: "spread", Min: 0, HasMin: true, MinExcl: true},
				{Name: "exact", Kind: scenarios.Bool, Default: "true", Help: "exact gradients"},
			},
			Algorithms: []string{"ssfw-as", "afw", "fista"},
			Defaults:   []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}},
			Build:      build,
		},
		{
			Name: "lasso", Title: "LASSO", Group: "model",
			Params: []scenarios.Param{
				{Name: "x", Kind: scenarios.Path, Format: "csv", Help: "design matrix CSV"},
			},
			Algorithms: []string{"ssfw-as", "fista"},
			Build:      build,
		},
		{Name: "mystery", Group: "zzz", Algorithms: []string{"fw"}, Build: build},
	}
	presets := []*scenarios.Preset{
		{Name: "figure1", Title: "Paper Figure 1", Help: "ssfw-as against fista", Spec: spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "ssfw-as"}}, Replications: 3}},
	}
	return list, presets
}

func fakeDeps() Deps {
	list, presets := fakeCatalogue()
	return Deps{
		Scenarios: func() []*scenarios.Scenario { return list },
		Presets:   func() []*scenarios.Preset { return presets },
		DataDir:   "/srv/data",
	}
}

func newServer(t *testing.T, deps Deps) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	Mount(r, deps)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestCatalogueGroupsInFixedOrder(t *testing.T) {
	c := Catalogue(fakeCatalogue())
	var got []string
	for _, g := range c.Groups {
		got = append(got, g.Name+":"+g.Title)
	}
	want := []string{"toy:Teaching polytopes", "model:Regression and classification models", "zzz:zzz"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("groups = %v, want %v", got, want)
	}
	if c.Groups[2].Problems[0].Title != "mystery" {
		t.Errorf("a problem without title is shown by its name, got %q", c.Groups[2].Problems[0].Title)
	}
	p := c.Groups[0].Problems[0].Params
	tests := []struct {
		i         int
		kind      string
		rule      string
		hasMin    bool
		minExcl   bool
		hasChoice bool
	}{
		{0, "int", "must be a whole number ≥ 3 and ≤ 64", true, false, false},
		{1, "choice", "must be one of outside, edge, inside", false, false, true},
		{2, "float", "must be a number > 0", true, true, false},
		{3, "bool", "must be true or false", false, false, false},
	}
	for _, tc := range tests {
		got := p[tc.i]
		if got.Kind != tc.kind || got.Rule != tc.rule || (got.Min != nil) != tc.hasMin || got.MinExclusive != tc.minExcl || (len(got.Choices) > 0) != tc.hasChoice {
			t.Errorf("param %d = %+v, want kind %s rule %q", tc.i, got, tc.kind, tc.rule)
		}
	}
	if c.Defaults.Rho != spec.DefaultRho || c.Defaults.MaxReplications != spec.MaxReplications {
		t.Errorf("defaults not taken from spec: %+v", c.Defaults)
	}
}

// attr finds the first element matching the pattern; the pages' key elements
// are checked by their ids and data attributes, not as whole-file goldens.
func mustMatch(t *testing.T, html, pattern string) {
	t.Helper()
	if !regexp.MustCompile(pattern).MatchString(html) {
		t.Errorf("page lacks %s", pattern)
	}
}

func TestStartPageRendersCatalogue(t *testing.T) {
	var b strings.Builder
	if err := templates.Start(StartPage(fakeDeps())).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, pat := range []string{
		`<!doctype html>`,
		`<form id="start-form"`,
		`<select id="problem" name="problem" data-field="problem">`,
		`<optgroup label="Teaching polytopes" data-group="toy"><option value="toy-polygon" selected>Quadratic over a polygon</option>`,
		`<fieldset class="params" data-problem="toy-polygon" hidden>`,
		// int parameter: number input with the default, its help and its rule
		`<input type="number" step="1" id="p-toy-polygon-vertices" name="vertices" value="6" data-field="params.vertices" data-kind="int"`,
		`vertex count</span>`,
		`must be a whole number ≥ 3 and ≤ 64</span>`,
		`<span class="err" data-error-for="params.vertices"></span>`,
		// choice parameter: the default selected
		`<option value="edge" selected>edge</option>`,
		// bool parameter
		`<option value="true" selected>true</option>`,
		// path parameter: a path field and where relative paths are read
		`name="x" value="" data-field="params.x" data-kind="path" placeholder="a file on the server, or upload one"`,
		`Relative paths are read from /srv/data on the server.`,
		// and a file picker that uploads in the format its help names
		`<input type="file" class="upload" id="p-[a-z-]+-x-file" data-upload-for="p-[a-z-]+-x" data-upload-field="params.x" data-format="csv">`,
		`<span class="upload-status muted small" data-upload-status="params.x"></span>`,
		`Or choose a file \(CSV\): it is checked and stored on the server until it stops.`,
		// presets, algorithm row template, run-level fields, submit
		`data-preset="figure1"`,
		`<template id="algo-row-template">`,
		`<canvas class="sched-preview"`,
		`id="run-replications" name="replications" value="1"`,
		`id="run-iters" name="iters" value="1000"`,
		`id="run-eval_every" name="eval_every" value="0"`,
		`<button type="submit" id="start-run"`,
		`<script id="catalogue" type="application/json">`,
		`src="/static/vendor/uPlot.iife.min.js\?v=[0-9a-f]{16}"`,
		`src="/static/app.js\?v=[0-9a-f]{16}"`,
	} {
		mustMatch(t, html, `(?i)`+pat)
	}
	// The help text is escaped, not injected.
	mustMatch(t, html, `A polygon &amp; its &lt;level&gt; sets.`)
	// The embedded catalogue is the same data the page was built from.
	m := regexp.MustCompile(`(?s)<script id="catalogue" type="application/json">(.*?)</script>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no catalogue script")
	}
	var c templates.Catalogue
	if err := json.Unmarshal([]byte(m[1]), &c); err != nil {
		t.Fatalf("catalogue JSON: %v", err)
	}
	if len(c.Groups) != 3 || c.Groups[0].Problems[0].Params[0].Rule != "must be a whole number ≥ 3 and ≤ 64" || len(c.Presets) != 1 || c.Presets[0].Spec.Replications != 3 {
		t.Errorf("catalogue JSON = %+v", c)
	}
}

// Every path parameter's picker sends the format the registry declares.
func TestUploadFormat(t *testing.T) {
	c := Catalogue(scenarios.All(), nil)
	n := 0
	for _, g := range c.Groups {
		for _, pr := range g.Problems {
			for _, p := range pr.Params {
				if p.Kind != "path" {
					continue
				}
				n++
				if p.Format != "csv" && p.Format != "svmlight" && p.Format != "ocr" {
					t.Errorf("%s: parameter %s uploads as %q", pr.Name, p.Name, p.Format)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no path parameter in the catalogue")
	}
}

func TestStartPageWithEmptyCatalogueSaysSo(t *testing.T) {
	var b strings.Builder
	deps := Deps{Scenarios: func() []*scenarios.Scenario { return nil }, Presets: func() []*scenarios.Preset { return nil }}
	if err := templates.Start(StartPage(deps)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	mustMatch(t, b.String(), `id="no-problems"`)
	mustMatch(t, b.String(), `id="no-presets"`)
}

func TestRunPageShell(t *testing.T) {
	var b strings.Builder
	if err := templates.Run(templates.RunPage{ID: `r1"><x`, Asset: AssetURL}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, pat := range []string{
		`<div id="run-page" data-run-id="r1&#34;&gt;&lt;x" data-status="loading">`,
		`id="btn-pause"`, `id="btn-resume"`, `id="btn-step"`, `id="btn-stop"`,
		`<select id="xaxis"><option value="k">iterations</option> <option value="passes">effective passes</option> <option value="time_s">seconds</option>`,
		`id="logx"`, `id="export-csv"`, `id="export-json"`, `id="export-jsonl"`, `id="export-figure"`, `id="compare-with"`,
		`id="run-name"`, `id="run-note"`, `id="run-star"`, `id="run-message"`,
		`<table id="legend"`, `<section id="charts"`,
		`<section id="teaching" class="card teaching" hidden>`, `id="teach-canvas"`, `id="teach-timeline"`, `id="teach-speed"`, `id="teach-trace2"`,
		`id="objmode"`, `id="smooth"`, `id="show-drops"`, `id="show-aways"`, `id="legend-algos"`, `id="run-sync"`,
		`<section id="panels" class="card" hidden>`,
	} {
		mustMatch(t, html, regexp.QuoteMeta(pat))
	}
}

func TestMountRoutes(t *testing.T) {
	ts := newServer(t, fakeDeps())
	tests := []struct {
		path, ctype, contains string
		status                int
	}{
		{"/", "text/html; charset=utf-8", `id="start-form"`, 200},
		{"/runs/r7", "text/html; charset=utf-8", `data-run-id="r7"`, 200},
		{"/runs", "text/html; charset=utf-8", `<div id="history-page">`, 200},
		{"/compare?runs=a1,b2", "text/html; charset=utf-8", `data-runs="a1,b2"`, 200},
		{"/compare?runs=%22%3E%3Cx", "text/html; charset=utf-8", `data-runs="&#34;&gt;&lt;x"`, 200},
		{"/sweeps/s9", "text/html; charset=utf-8", `data-sweep-id="s9"`, 200},
		{"/static/js/lab.js", "text/javascript; charset=utf-8", "export function specDiff", 200},
		{"/static/app.js", "text/javascript; charset=utf-8", "scheduleSize", 200},
		{"/static/js/charts.js", "text/javascript; charset=utf-8", "export function createCharts", 200},
		{"/static/js/decimate.js", "text/javascript; charset=utf-8", "export class Decimator", 200},
		{"/static/app.css", "text/css; charset=utf-8", "--accent", 200},
		{"/static/vendor/uPlot.iife.min.js", "text/javascript; charset=utf-8", "uPlot (v1.6.32)", 200},
		{"/static/vendor/uPlot.min.css", "text/css; charset=utf-8", ".uplot", 200},
		{"/static/vendor/uPlot.LICENSE", "", "MIT License", 200},
		{"/static/nope.js", "", "404", 404},
		{"/static/../web.go", "", "", 404},
	}
	for _, tc := range tests {
		res, body := get(t, ts.URL+tc.path, nil)
		if res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, res.StatusCode, tc.status)
			continue
		}
		if tc.ctype != "" && res.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s: Content-Type %q, want %q", tc.path, res.Header.Get("Content-Type"), tc.ctype)
		}
		if !strings.Contains(body, tc.contains) {
			t.Errorf("%s: body lacks %q", tc.path, tc.contains)
		}
	}
}

func TestStaticCaching(t *testing.T) {
	ts := newServer(t, fakeDeps())
	url := AssetURL("app.js")
	if !regexp.MustCompile(`^/static/app\.js\?v=[0-9a-f]{16}$`).MatchString(url) {
		t.Fatalf("AssetURL = %q", url)
	}
	res, _ := get(t, ts.URL+url, nil)
	if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("versioned asset Cache-Control = %q", cc)
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	res, _ = get(t, ts.URL+"/static/app.js?v=stale", nil)
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("unversioned asset Cache-Control = %q", cc)
	}
	res, body := get(t, ts.URL+"/static/app.js", map[string]string{"If-None-Match": etag})
	if res.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("revalidation: status %d, %d bytes", res.StatusCode, len(body))
	}
	if AssetURL("missing.js") != "/static/missing.js" {
		t.Errorf("AssetURL of a missing file = %q", AssetURL("missing.js"))
	}
}

// The vendored files are the pinned version with its licence.
func TestVendoredUPlotMatchesLockFile(t *testing.T) {
	var lock struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	b, err := staticFS.ReadFile("static/vendor/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := readFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	v := lock.Packages["node_modules/uplot"].Version
	if v == "" || strings.TrimSpace(string(b)) != "uplot "+v {
		t.Errorf("vendored %q, lock file pins %q", b, v)
	}
	js := assets["vendor/uPlot.iife.min.js"]
	if js == nil || !strings.Contains(string(js.data[:80]), "(v"+v+")") {
		t.Errorf("uPlot.iife.min.js is not version %s", v)
	}
	if a := assets["vendor/uPlot.LICENSE"]; a == nil || !strings.Contains(string(a.data), "Leon Sorokin") {
		t.Error("uPlot licence missing")
	}
}

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }

// TestPagesNeedNoInlineScript: every page loads their script as a module
// from a file and carry no inline script or event handler, so that they
// work under a Content-Security-Policy of script-src 'self'.
func TestPagesNeedNoInlineScript(t *testing.T) {
	ts := newServer(t, fakeDeps())
	for _, path := range []string{"/", "/runs/r1", "/runs", "/compare?runs=a,b", "/sweeps/s1"} {
		_, html := get(t, ts.URL+path, nil)
		mustMatch(t, html, `<script type="module" src="/static/app.js\?v=[0-9a-f]{16}"></script>`)
		for _, m := range regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`).FindAllStringSubmatch(html, -1) {
			attrs, body := m[1], strings.TrimSpace(m[2])
			if strings.Contains(attrs, `type="application/json"`) {
				continue // data, not script
			}
			if !strings.Contains(attrs, "src=") || body != "" {
				t.Errorf("%s: inline script <script%s>%.60s", path, attrs, body)
			}
		}
		if on := regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`).FindString(html); on != "" {
			t.Errorf("%s: inline event handler %q", path, on)
		}
	}
	// Every module the entry imports is served.
	for _, name := range []string{"util", "form", "run", "format", "decimate", "schedule", "rules", "teachmath", "traces", "charts", "events", "stream", "teaching", "panels", "export", "lab", "history", "compare", "sweep"} {
		if a, ok := assets["js/"+name+".js"]; !ok || !strings.Contains(a.ctype, "javascript") {
			t.Errorf("module js/%s.js missing or not served as JavaScript", name)
		}
	}
}
