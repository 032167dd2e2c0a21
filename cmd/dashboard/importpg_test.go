package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// TestImportIntoPostgreSQL: `dashboard import -db postgres://… DIR` brings
// the bundles of a job array's sweep into a PostgreSQL store as one sweep
// with its cells' runs; importing again stores no run twice.
func TestImportIntoPostgreSQL(t *testing.T) {
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	out := filepath.Join(t.TempDir(), "out")
	doc := `{"name":"ρ on PostgreSQL","base":{"problem":"lasso","params":{"n":"20","p":"10"},"algorithms":[{"algo":"ssfw-as"}],"replications":1,"seed":1,"iters":20},
		"axes":[{"param":"algorithms[0].rho","values":[0.1,0.2,0.4]}]}`
	for _, cell := range []string{"0", "1", "2"} {
		var se bytes.Buffer
		if code := runSolve([]string{"-sweep", doc, "-cell", cell, "-out", out}, &bytes.Buffer{}, &se); code != 0 {
			t.Fatalf("-cell %s: exit %d: %s", cell, code, se.String())
		}
	}
	var so, se bytes.Buffer
	if code := runImport([]string{"-db", db, out}, strings.NewReader(""), &so, &se); code != 0 || !strings.Contains(so.String(), "(3 cells, 3 runs imported, 0 missing)") {
		t.Fatalf("import DIR: exit %d: %q %s", code, so.String(), se.String())
	}
	so.Reset()
	if code := runImport([]string{"-db", db, filepath.Join(out, "cell-001.json")}, strings.NewReader(""), &so, &se); code != 0 || !strings.Contains(so.String(), "imported before; nothing new stored") {
		t.Errorf("a cell's bundle again: exit %d: %q %s", code, so.String(), se.String())
	}
	ctx := context.Background()
	st, err := pgstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, total, err := st.ListSweeps(ctx, 0, 10)
	if err != nil || total != 1 {
		t.Fatalf("%d sweeps, %v", total, err)
	}
	sw, err := st.GetSweep(ctx, list[0].ID)
	if err != nil || sw.Name != "ρ on PostgreSQL" || sw.Status != store.StatusDone || len(sw.Cells) != 3 {
		t.Fatalf("sweep %+v %v", sw, err)
	}
	for i, cell := range sw.Cells {
		r, err := st.Get(ctx, cell.RunID)
		if err != nil || r.Spec.Algorithms[0].Rho != []float64{0.1, 0.2, 0.4}[i] || r.Status != store.StatusDone || r.Traces[0].Records == 0 {
			t.Errorf("cell %d: run %+v, %v", i, r, err)
		}
	}
	if _, total, _ := st.List(ctx, store.Filter{}); total != 3 {
		t.Errorf("%d runs stored, want 3", total)
	}
}
