package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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
type watcher struct {
	st             store.Backend
	dir            string
	stdout, stderr io.Writer
	done           map[string]bool   // sweep.json paths imported or found imported
	failed         map[string]string // the last error of a path, said once
}

func newWatcher(st store.Backend, dir string, stdout, stderr io.Writer) *watcher {
	return &watcher{st: st, dir: dir, stdout: stdout, stderr: stderr, done: map[string]bool{}, failed: map[string]string{}}
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

// once looks at the directory once and returns the sweeps it stored.
func (w *watcher) once(ctx context.Context) int {
	indexes, _ := filepath.Glob(filepath.Join(w.dir, "*", "sweep.json"))
	if _, err := os.Stat(filepath.Join(w.dir, "sweep.json")); err == nil {
		indexes = append(indexes, filepath.Join(w.dir, "sweep.json"))
	}
	n := 0
	for _, index := range indexes {
		if w.done[index] || ctx.Err() != nil {
			continue
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
	stored, err = importSweepWith(ctx, w.st, index, sweepImport{whole: true, once: true}, io.Discard, w.stderr)
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
	b, err := os.ReadFile(index)
	if err != nil {
		return 0, err
	}
	var idx sweepIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		return 0, fmt.Errorf("sweep.json: %v", err)
	}
	n := 0
	for _, c := range idx.Cells {
		if _, err := os.Stat(filepath.Join(filepath.Dir(index), filepath.Base(c.Bundle))); err != nil {
			n++
		}
	}
	return n, nil
}
