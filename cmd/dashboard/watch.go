package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/store"
)

// WatchEvery is how often `serve -watch DIR` looks at DIR.
const WatchEvery = 5 * time.Second

// watcher imports the sweeps that job arrays write into a directory
// (`solve -sweep DOC -cell I -out DIR`: DIR itself, or its
// subdirectories), each as one sweep once all its cells' bundles are
// there, as `dashboard import DIR` would. A sweep imported before, by this
// server or an earlier one, is not stored again (its runs are found by
// their bundles' digests, the sweep by its runs).
//
// It reads only regular files inside DIR: a sweep.json or a bundle that is
// a link leading out of DIR, a FIFO, a device or a directory is refused
// (opened without blocking, checked with fstat), each file is bounded (a
// sweep.json by MaxSweepIndex, a bundle by opt.maxBundle, serve's
// -max-import) and each import is counted in the memory budget (serve's
// -mem) while it runs. A bad file is reported once and skipped: it never
// stops the other sweeps, nor the server's shutdown.
type watcher struct {
	st             store.Backend
	dir            string
	stdout, stderr io.Writer
	opt            sweepImport
	done           map[string]bool   // sweep.json paths imported or found imported
	failed         map[string]string // the last error of a path, said once
}

func newWatcher(st store.Backend, dir string, stdout, stderr io.Writer) *watcher {
	return &watcher{st: st, dir: dir, stdout: stdout, stderr: stderr, opt: sweepImport{whole: true, once: true},
		done: map[string]bool{}, failed: map[string]string{}}
}

// run looks every WatchEvery until ctx ends.
func (w *watcher) run(ctx context.Context) {
	t := time.NewTicker(WatchEvery)
	defer t.Stop()
	for {
		w.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// indexes lists the sweep.json files of DIR and of its subdirectories
// (entries as they are: a link is followed only when reading, and only
// within DIR).
func (w *watcher) indexes() []string {
	out := []string{filepath.Join(w.dir, "sweep.json")}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			out = append(out, filepath.Join(w.dir, e.Name(), "sweep.json"))
		}
	}
	return out
}

// once looks at the directory once and returns the sweeps it stored.
func (w *watcher) once(ctx context.Context) int {
	n := 0
	for _, index := range w.indexes() {
		if w.done[index] || ctx.Err() != nil {
			continue
		}
		if _, err := os.Lstat(index); err != nil {
			continue // no sweep there (yet)
		}
		stored, whole, err := w.importOne(ctx, index)
		if err != nil {
			if msg := err.Error(); w.failed[index] != msg {
				w.failed[index] = msg
				fmt.Fprintf(w.stderr, "serve -watch: %s: %v (tried again every %v)\n", index, err, WatchEvery)
			}
			continue
		}
		delete(w.failed, index)
		if whole {
			w.done[index] = true
		}
		if stored {
			n++
		}
	}
	return n
}

// importOne imports one sweep if every cell has its bundle; whole says
// that it is done with (stored now or before).
func (w *watcher) importOne(ctx context.Context, index string) (stored, whole bool, err error) {
	// the sweep.json is read inside DIR, as the bundles are (a
	// subdirectory that is a link may lead elsewhere inside DIR, not out)
	rel, err := filepath.Rel(w.dir, index)
	if err != nil {
		return false, false, err
	}
	f, _, err := datapath.OpenIn(w.dir, rel, MaxSweepIndex)
	if err != nil {
		return false, false, err
	}
	f.Close()
	stored, err = importSweepWith(ctx, w.st, index, w.opt, io.Discard, w.stderr)
	if err != nil {
		return false, false, err
	}
	if stored {
		fmt.Fprintf(w.stdout, "serve -watch: %s: imported as one sweep\n", index)
		return true, true, nil
	}
	// not stored: waiting for a cell, or imported before
	missing, err := missingBundles(index)
	return false, err == nil && missing == 0, err
}

// missingBundles counts the cells of a sweep index without their bundle.
func missingBundles(index string) (int, error) {
	b, err := readIndex(index)
	if err != nil {
		return 0, err
	}
	var idx sweepIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		return 0, fmt.Errorf("sweep.json: %v", err)
	}
	n := 0
	for _, c := range idx.Cells {
		if _, err := os.Lstat(filepath.Join(filepath.Dir(index), filepath.Base(c.Bundle))); err != nil {
			n++
		}
	}
	return n, nil
}
