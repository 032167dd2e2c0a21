package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
)

// `solve -sweep DOC -cell I -out DIR` runs cell I alone, as each task of a
// job array would; `dashboard import DIR` then stores one sweep whose
// cells are the imported runs (a missing cell kept without one), and its
// sweep.json alone is accepted too.
func TestSweepCellsImportAsOneSweep(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	doc := `{"name":"ρ by array","base":{"problem":"lasso","params":{"n":"20","p":"10"},"algorithms":[{"algo":"ssfw-as"}],"replications":1,"seed":1,"iters":20},
		"axes":[{"param":"algorithms[0].rho","values":[0.1,0.2,0.4]}]}`
	for _, cell := range []string{"2", "0"} {
		var so, se bytes.Buffer
		if code := runSolve([]string{"-sweep", doc, "-cell", cell, "-out", out}, &so, &se); code != 0 {
			t.Fatalf("-cell %s: exit %d: %s", cell, code, se.String())
		}
		if n := strings.Count(so.String(), "\n"); n != 1 || !strings.HasPrefix(so.String(), "cell "+cell+" ") {
			t.Errorf("-cell %s ran more than its cell: %q", cell, so.String())
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "cell-*.json"))
	if len(files) != 2 {
		t.Fatalf("bundles %v, want cells 0 and 2", files)
	}
	var se bytes.Buffer
	if code := runSolve([]string{"-sweep", doc, "-cell", "3", "-out", out}, &bytes.Buffer{}, &se); code != 2 || !strings.Contains(se.String(), "-cell: must be between 0 and 2") {
		t.Errorf("-cell 3 of 3 cells: exit %d, %q", code, se.String())
	}
	db := filepath.Join(dir, "fwlab.db")
	var so bytes.Buffer
	se.Reset()
	if code := runImport([]string{"-db", db, out}, strings.NewReader(""), &so, &se); code != 0 {
		t.Fatalf("import DIR: exit %d: %s", code, se.String())
	}
	if !strings.Contains(so.String(), "(3 cells, 2 runs imported, 1 missing)") || !strings.Contains(se.String(), "cell 1") {
		t.Errorf("import DIR said %q / %q", so.String(), se.String())
	}
	// the sweep.json file alone, once every cell has run
	if code := runSolve([]string{"-sweep", doc, "-cell", "1", "-out", out}, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatal("cell 1")
	}
	so.Reset()
	if code := runImport([]string{"-db", db, filepath.Join(out, "sweep.json")}, strings.NewReader(""), &so, &se); code != 0 || !strings.Contains(so.String(), "(3 cells, 3 runs imported, 0 missing)") {
		t.Fatalf("import sweep.json: exit %d: %q %s", code, so.String(), se.String())
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, total, err := st.ListSweeps(context.Background(), 0, 10)
	if err != nil || total != 2 {
		t.Fatalf("%d sweeps, %v", total, err)
	}
	sw, err := st.GetSweep(context.Background(), list[0].ID)
	if err != nil || sw.Name != "ρ by array" || sw.Status != store.StatusDone || len(sw.Cells) != 3 {
		t.Fatalf("sweep %+v %v", sw, err)
	}
	for i, c := range sw.Cells {
		r, err := st.Get(context.Background(), c.RunID)
		if err != nil || r.Spec.Algorithms[0].Rho != []float64{0.1, 0.2, 0.4}[i] {
			t.Errorf("cell %d: run %+v, %v", i, r, err)
		}
	}
	if sw, _ := st.GetSweep(context.Background(), list[1].ID); sw.Status != store.StatusInterrupted || sw.Cells[1].RunID != "" {
		t.Errorf("the sweep with a missing cell: %+v", sw)
	}
}

// A figure preset's JSON carries its format, and importing it says what
// the file is.
func TestFigureDataIsNotABundle(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fig1.json")
	var se bytes.Buffer
	if code := runSolve([]string{"-scenario", "paper-fig1", "-iters", "20", "-replications", "1", "-n", "30", "-out", p}, &bytes.Buffer{}, &se); code != 0 {
		t.Fatalf("fig1: exit %d %s", code, se.String())
	}
	b, _ := os.ReadFile(p)
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Format != figureDataFormat {
		t.Fatalf("format %q, %v", head.Format, err)
	}
	se.Reset()
	code := runImport([]string{"-db", filepath.Join(dir, "db"), p}, strings.NewReader(""), &bytes.Buffer{}, &se)
	if code != 1 || !strings.Contains(se.String(), "figure data from `solve -scenario`, not a run bundle") {
		t.Errorf("import of figure data: exit %d, %q", code, se.String())
	}
}
