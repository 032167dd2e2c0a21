package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/server"
)

const lassoBase = `{"problem":"lasso","params":{"n":40,"p":8},"algorithms":[{"algo":"ssfw-as"},{"algo":"fista"}],"replications":2,"seed":1,"iters":60,"eval_every":5}`

// solve -sweep writes one bundle per cell, each the run of the cell's spec,
// and an index; a bad axis is named.
func TestSolveSweepWritesABundlePerCell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	doc := `{"base":` + lassoBase + `,"axes":[{"param":"algorithms[0].rho","values":[0.1,0.3]},{"param":"seed","values":[1,2]}]}`
	stdout, stderr, code := solve(t, "-sweep", doc, "-out", dir)
	if code != 0 {
		t.Fatalf("solve -sweep: %d %s", code, stderr)
	}
	if n := strings.Count(stdout, "\n"); n != 4 {
		t.Errorf("printed %d lines, want one per cell:\n%s", n, stdout)
	}
	var index struct {
		Cells []struct {
			Values map[string]float64
			Bundle string
			Status string
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil || json.Unmarshal(b, &index) != nil || len(index.Cells) != 4 {
		t.Fatalf("sweep.json: %s %v", b, err)
	}
	for i, c := range index.Cells {
		data, err := os.ReadFile(filepath.Join(dir, c.Bundle))
		if err != nil {
			t.Fatal(err)
		}
		bd, err := bundle.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
		wantRho, wantSeed := []float64{0.1, 0.1, 0.3, 0.3}[i], []float64{1, 2, 1, 2}[i]
		if c.Status != "done" || c.Values["algorithms[0].rho"] != wantRho || c.Values["seed"] != wantSeed ||
			bd.Spec.Algorithms[0].Rho != wantRho || bd.Spec.Seed != int64(wantSeed) || len(bd.Traces) != 4 || len(bd.Traces[0].Records) != 61 {
			t.Errorf("cell %d: %+v, spec %+v, %d traces", i, c, bd.Spec, len(bd.Traces))
		}
	}
	// The same cell run on its own gives the same records (seeded runs are
	// deterministic; wall times aside).
	one, _, code := solve(t, "-problem", "lasso", "-n", "40", "-p", "8", "-algo", "ssfw-as,fista", "-rho", "0.3", "-replications", "2", "-seed", "2", "-iters", "60", "-eval-every", "5", "-format", "json")
	if code != 0 {
		t.Fatal("solve of one cell failed")
	}
	single, err := bundle.Decode(strings.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, index.Cells[3].Bundle))
	cell, _ := bundle.Decode(bytes.NewReader(data))
	for i := range single.Traces {
		a, b := single.Traces[i].Records, cell.Traces[i].Records
		for k := range a {
			a[k].Time, b[k].Time = 0, 0
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("trace %d of the cell differs from the same spec solved alone", i)
		}
	}

	for _, c := range []struct{ doc, want string }{
		{`{"base":` + lassoBase + `,"axes":[{"param":"params.nope","values":[1]}]}`, "axes[0].param"},
		{`{"base":` + lassoBase + `,"axes":[{"param":"params.n","values":[40,-1]}]}`, "axes[0].values[1]"},
		{`{"base":` + lassoBase + `}`, "axes"},
		{`{"base":`, "not valid JSON"},
	} {
		_, stderr, code := solve(t, "-sweep", c.doc, "-out", dir)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: %d %q, want 2 naming %s", c.doc, code, stderr, c.want)
		}
	}
	if _, stderr, code := solve(t, "-sweep", doc); code != 2 || !strings.Contains(stderr, "-out") {
		t.Errorf("without -out: %d %q", code, stderr)
	}
}

// A bundle written by `solve -format json`, posted to the server, becomes a
// stored run whose trace is the file's; cut short, it is refused naming the
// field.
func TestServerImportsASolveBundle(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	if _, stderr, code := solve(t, "-problem", "lasso", "-n", "40", "-p", "8", "-algo", "ssfw-as,fista", "-replications", "2", "-iters", "80", "-format", "json", "-out", file); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := bundle.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() { ts.Close(); srv.Close() }()
	resp, err := http.Post(ts.URL+"/api/runs/import", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != 201 || out.ID == "" {
		t.Fatalf("import: %d", resp.StatusCode)
	}
	// The stored trace, as the trace endpoint gives it, record by record.
	resp, err = http.Get(ts.URL + "/api/runs/" + out.ID + "/trace")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	n := 0
	for ti, tr := range want.Traces {
		for _, r := range tr.Records {
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[n]), &got); err != nil {
				t.Fatal(err)
			}
			wantLine, _ := json.Marshal(r)
			var w map[string]any
			_ = json.Unmarshal(wantLine, &w)
			w["trace"], w["algo"], w["replication"] = float64(ti), tr.Algo, float64(tr.Replication)
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("record %d of trace %d: stored %s, file %s", r.K, ti, lines[n], wantLine)
			}
			n++
		}
	}
	if n != len(lines) {
		t.Errorf("%d stored records, the file has %d", len(lines), n)
	}
	// Truncated inside the traces: 400 naming the field where reading stopped.
	from, to := bytes.Index(data, []byte(`"traces":[`)), bytes.Index(data, []byte(`"aggregates"`))
	if from < 0 || to < from {
		t.Fatalf("the bundle has no traces before its aggregates (%d, %d)", from, to)
	}
	resp, err = http.Post(ts.URL+"/api/runs/import", "application/json", bytes.NewReader(data[:(from+to)/2]))
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error, Field string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.HasPrefix(e.Field, "traces[") {
		t.Errorf("truncated bundle: %d %+v", resp.StatusCode, e)
	}
}

// A sweep document's cells read data files only inside -data (by default
// the working directory): an absolute path or one that climbs out fails
// its cell before the file is opened; a file inside is read, and the
// cell's bundle keeps the path as the document gives it.
func TestSolveSweepConfinesDataFiles(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	os.WriteFile(filepath.Join(data, "x.csv"), []byte("1,0\n0,1\n1,1\n"), 0o644)
	os.WriteFile(filepath.Join(data, "y.csv"), []byte("1\n2\n3\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "x.csv"), []byte("1,0\n0,1\n1,1\n"), 0o644)
	base := `{"problem":"lasso","params":{"y":"y.csv"},"algorithms":[{"algo":"afw"}],"seed":1,"iters":10,"eval_every":1}`
	doc := `{"base":` + base + `,"axes":[{"param":"params.x","values":["x.csv","` + filepath.Join(dir, "x.csv") + `","../x.csv"]}]}`
	out := filepath.Join(dir, "out")
	t.Chdir(data)
	stdout, stderr, code := solve(t, "-sweep", doc, "-out", out)
	if code != 1 || !strings.Contains(stdout, "cell 0 ") || strings.Contains(stdout, "cell 1 ") || strings.Contains(stdout, "cell 2 ") ||
		!strings.Contains(stderr, "cell 1 ") || !strings.Contains(stderr, "params.x: must be a path relative to the data folder") ||
		!strings.Contains(stderr, "cell 2 ") || !strings.Contains(stderr, "climbs out") {
		t.Fatalf("solve -sweep: %d\n%s\n%s", code, stdout, stderr)
	}
	f, err := os.Open(filepath.Join(out, cellFile(0)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bd, err := bundle.Decode(f)
	if err != nil || bd.Spec.Params["x"] != "x.csv" || bd.Spec.Params["y"] != "y.csv" {
		t.Fatalf("cell 0's bundle: %v %+v", err, bd.Spec.Params)
	}
	// -data names another folder
	t.Chdir(dir)
	if _, stderr, code := solve(t, "-sweep", doc, "-out", filepath.Join(dir, "out2"), "-data", "data"); code != 1 || strings.Contains(stderr, "cell 0 ") {
		t.Fatalf("solve -sweep -data: %d %s", code, stderr)
	}
}
