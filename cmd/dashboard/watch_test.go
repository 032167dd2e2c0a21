package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
)

// TestWatchImportsWholeSweepsOnce: `serve -watch DIR` imports a job
// array's sweep (in a subfolder of DIR) only once all its cells' bundles
// are there, as one sweep, and a second look, or another server's watcher
// on the same store, stores nothing again; a bad -watch is refused naming
// the flag.
func TestWatchImportsWholeSweepsOnce(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "array1")
	doc := `{"name":"watched","base":{"problem":"lasso","params":{"n":"20","p":"10"},"algorithms":[{"algo":"ssfw-as"}],"replications":1,"seed":1,"iters":20},
		"axes":[{"param":"algorithms[0].rho","values":[0.1,0.2]}]}`
	solveCell := func(cell string) {
		t.Helper()
		var se bytes.Buffer
		if code := runSolve([]string{"-sweep", doc, "-cell", cell, "-out", out}, &bytes.Buffer{}, &se); code != 0 {
			t.Fatalf("-cell %s: exit %d: %s", cell, code, se.String())
		}
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "fwlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var so, se bytes.Buffer
	w := newWatcher(st, root, &so, &se)
	solveCell("1")
	if n := w.once(ctx); n != 0 {
		t.Fatalf("a sweep with one of two cells run: %d imported", n)
	}
	if _, total, _ := st.List(ctx, store.Filter{}); total != 0 {
		t.Errorf("%d runs stored before the sweep was whole", total)
	}
	solveCell("0")
	if n := w.once(ctx); n != 1 || !strings.Contains(so.String(), "imported as one sweep") {
		t.Fatalf("the whole sweep: %d imported; %q %q", n, so.String(), se.String())
	}
	if n := w.once(ctx); n != 0 {
		t.Errorf("looked again: %d imported", n)
	}
	if n := newWatcher(st, root, &so, &se).once(ctx); n != 0 {
		t.Errorf("another watcher on the same store: %d imported", n)
	}
	list, total, err := st.ListSweeps(ctx, 0, 10)
	if err != nil || total != 1 || list[0].Name != "watched" {
		t.Fatalf("sweeps: %d, %v", total, err)
	}
	if _, total, _ := st.List(ctx, store.Filter{}); total != 2 {
		t.Errorf("%d runs stored, want the 2 cells'", total)
	}
	if se.Len() != 0 {
		t.Errorf("errors said: %s", se.String())
	}
	var serr bytes.Buffer
	bad := filepath.Join(root, "nope")
	if code := runServe([]string{"-db", filepath.Join(t.TempDir(), "x.db"), "-watch", bad}, &bytes.Buffer{}, &serr); code != 2 || !strings.Contains(serr.String(), "-watch") {
		t.Errorf("-watch of a missing folder: exit %d, %q", code, serr.String())
	}
	_ = os.Remove(bad)
}
