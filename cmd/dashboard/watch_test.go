package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
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

// `serve -watch DIR` reads only regular files inside DIR, each bounded and
// counted in the memory budget: a sweep.json that is a FIFO, a link to a
// device or out of DIR, or a file over the bound, and a cell's bundle
// linked to a device, are each refused once, naming the file and the rule,
// without stopping the good sweep beside them or the watcher's shutdown;
// an import with no room in -mem is refused naming -mem.
func TestWatchReadsOnlyRegularFilesInside(t *testing.T) {
	root, private := t.TempDir(), t.TempDir()
	doc := `{"name":"%s","base":{"problem":"lasso","params":{"n":"20","p":"10"},"algorithms":[{"algo":"ssfw-as"}],"replications":1,"seed":1,"iters":20},
		"axes":[{"param":"algorithms[0].rho","values":[0.1]}]}`
	solveInto := func(name, out string) {
		t.Helper()
		var se bytes.Buffer
		if code := runSolve([]string{"-sweep", fmt.Sprintf(doc, name), "-out", out}, &bytes.Buffer{}, &se); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, se.String())
		}
	}
	solveInto("good", filepath.Join(root, "good"))
	solveInto("private", filepath.Join(private, "sw"))
	solveInto("badcell", filepath.Join(root, "badcell"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Remove(filepath.Join(root, "badcell", "cell-000.json")))
	must(os.Symlink("/dev/zero", filepath.Join(root, "badcell", "cell-000.json")))
	must(os.Mkdir(filepath.Join(root, "fifo"), 0o755))
	must(syscall.Mkfifo(filepath.Join(root, "fifo", "sweep.json"), 0o644))
	must(os.Mkdir(filepath.Join(root, "zero"), 0o755))
	must(os.Symlink("/dev/zero", filepath.Join(root, "zero", "sweep.json")))
	must(os.Symlink(filepath.Join(private, "sw"), filepath.Join(root, "out")))
	big, err := os.Create(filepath.Join(root, "sweep.json"))
	must(err)
	must(big.Truncate(MaxSweepIndex + 1))
	big.Close()

	st, err := store.Open(filepath.Join(t.TempDir(), "fwlab.db"))
	must(err)
	defer st.Close()
	mgr := session.NewManager(session.Options{MaxMemory: 64 << 20, Flags: map[string]string{"MaxMemory": "-mem"}})
	var so, se bytes.Buffer
	w := newWatcher(st, root, &so, &se)
	w.opt.maxBundle, w.opt.reserve = 1<<20, mgr.Reserve
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- w.once(ctx) }()
	select {
	case n := <-done:
		if n != 1 {
			t.Errorf("%d sweeps imported, want the good one", n)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the watcher still blocked after 60 s")
	}
	list, total, err := st.ListSweeps(ctx, 0, 10)
	if err != nil || total != 1 || list[0].Name != "good" {
		t.Fatalf("sweeps stored: %d %+v %v", total, list, err)
	}
	for _, want := range []string{
		filepath.Join(root, "fifo", "sweep.json") + ": \"fifo/sweep.json\": not a regular file (a pipe)",
		filepath.Join(root, "zero", "sweep.json") + ": \"zero/sweep.json\": is a link that leads out of",
		filepath.Join(root, "out", "sweep.json") + ": \"out/sweep.json\": is a link that leads out of",
		filepath.Join(root, "sweep.json") + ": \"sweep.json\": 16777217 bytes, over the limit of 16777216",
		filepath.Join(root, "badcell", "sweep.json") + ": cell 0: cell-000.json: \"cell-000.json\": is a link that leads out of",
	} {
		if !strings.Contains(se.String(), want) {
			t.Errorf("the watcher did not say %q:\n%s", want, se.String())
		}
	}
	// said once, not at every look
	se.Reset()
	w.once(ctx)
	if se.Len() != 0 {
		t.Errorf("said again: %s", se.String())
	}
	// the run loop ends with its context, a bad file in the folder or not
	ended := make(chan struct{})
	go func() { w.run(ctx); close(ended) }()
	cancel()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not stop 30 s after its context ended")
	}

	// with no room in -mem for an import, the import waits, naming -mem
	solveInto("later", filepath.Join(root, "later"))
	tight := session.NewManager(session.Options{MaxMemory: 16 << 20, Flags: map[string]string{"MaxMemory": "-mem"}})
	w.opt.reserve = tight.Reserve
	se.Reset()
	if n := w.once(context.Background()); n != 0 || !strings.Contains(se.String(), "-mem") {
		t.Errorf("an import beyond -mem: %d imported; %s", n, se.String())
	}
}
