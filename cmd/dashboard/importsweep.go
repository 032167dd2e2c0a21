package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/sweep"
)

// figureDataFormat tags the JSON a figure preset writes (`solve -scenario
// paper-fig1 -format json`): the data of a figure, not a run bundle.
const figureDataFormat = "fwlab-figure-data/1"

// sniffImport tells what a path given to `dashboard import` is: a sweep
// (a directory holding sweep.json, or a sweep.json itself: the output of
// `solve -sweep`), figure data (refused, saying so), or else a bundle.
func sniffImport(name string) (sweepIndexPath string, err error) {
	if name == "-" {
		return "", nil
	}
	fi, err := os.Stat(name)
	if err != nil {
		return "", nil // importFile reports it
	}
	if fi.IsDir() {
		p := filepath.Join(name, "sweep.json")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("a directory without sweep.json: import a directory written by `dashboard solve -sweep DOC -out DIR`, or the bundle files in it")
		}
		return p, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.Contains(head, []byte(`"format": "`+sweepIndexFormat+`"`)) || bytes.Contains(head, []byte(`"format":"`+sweepIndexFormat+`"`)):
		return name, nil
	case bytes.Contains(head, []byte(`"format": "`+figureDataFormat+`"`)) || bytes.Contains(head, []byte(`"format":"`+figureDataFormat+`"`)):
		return "", errors.New("figure data from `solve -scenario`, not a run bundle: draw it with -out FILE.svg|.png|.pdf, or run `solve -format json` without a figure preset for a bundle")
	}
	return "", nil
}

// importSweep imports the bundles of a `solve -sweep` output directory,
// as listed by its sweep.json, and stores them as one sweep whose cells
// are those runs. A cell whose bundle is missing (a task of a job array
// that has not run) is kept without a run and named on stderr; the sweep
// is then stored as interrupted, else done.
func importSweep(ctx context.Context, st store.Backend, indexPath string, stdout, stderr io.Writer) error {
	_, err := importSweepWith(ctx, st, indexPath, sweepImport{}, stdout, stderr)
	return err
}

// sweepImport is how importSweepWith imports a sweep: whole only waits
// (imports nothing) while a cell's bundle is missing; once stores no
// second sweep with the same cells' runs as one stored before (the runs
// themselves are found again by their bundles' digests).
type sweepImport struct {
	whole, once bool
	// maxBundle bounds a cell's bundle (0: any size); reserve, when not
	// nil, counts each import in a memory budget while it runs (serve's
	// -mem), failing when there is no room.
	maxBundle int64
	reserve   func(bytes int64, what string) (release func(), err error)
}

// MaxSweepIndex bounds a sweep.json an import reads (they list their
// cells: a few hundred bytes each).
const MaxSweepIndex = 16 << 20

// readIndex reads a sweep.json: a regular file inside its directory (no
// link out of it, no FIFO or device, opened without blocking), at most
// MaxSweepIndex bytes.
func readIndex(indexPath string) ([]byte, error) {
	f, st, err := datapath.OpenIn(filepath.Dir(indexPath), filepath.Base(indexPath), MaxSweepIndex)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, st.Size()))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// importSweepWith is importSweep with options; it reports whether it
// stored a sweep.
func importSweepWith(ctx context.Context, st store.Backend, indexPath string, opt sweepImport, stdout, stderr io.Writer) (bool, error) {
	b, err := readIndex(indexPath)
	if err != nil {
		return false, err
	}
	var idx sweepIndex
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&idx); err != nil {
		return false, fmt.Errorf("sweep.json: %v", err)
	}
	if idx.Format != sweepIndexFormat {
		return false, fmt.Errorf("sweep.json: format: must be %q, got %q", sweepIndexFormat, idx.Format)
	}
	doc := sweep.Doc{Base: idx.Base, Axes: idx.Axes}
	cells, err := doc.Cells()
	if err != nil {
		return false, fmt.Errorf("sweep.json: %v", err)
	}
	if len(idx.Cells) != len(cells) {
		return false, fmt.Errorf("sweep.json: cells: the axes make %d cells, the file lists %d", len(cells), len(idx.Cells))
	}
	dir := filepath.Dir(indexPath)
	if opt.whole {
		for _, c := range idx.Cells {
			if _, err := os.Lstat(filepath.Join(dir, filepath.Base(c.Bundle))); err != nil {
				return false, nil // not every cell has run yet
			}
		}
	}
	axes, _ := json.Marshal(idx.Axes)
	rec := &store.Sweep{Base: idx.Base, Axes: axes, Name: idx.Name, Note: idx.Note, Status: store.StatusDone}
	runs, missing := 0, 0
	for i, c := range idx.Cells {
		want := cells[i].ValuesJSON(idx.Axes)
		if c.Index != i || !sameJSON(c.Values, want) {
			return false, fmt.Errorf("sweep.json: cells[%d]: index %d with values %s, the axes give cell %d values %s", i, c.Index, c.Values, i, want)
		}
		if filepath.Base(c.Bundle) != c.Bundle || c.Bundle == "" || c.Bundle == "." || c.Bundle == ".." {
			return false, fmt.Errorf("sweep.json: cells[%d].bundle: must be a file name in the sweep's directory, got %q", i, c.Bundle)
		}
		sc := store.Cell{Index: i, Values: want}
		path := filepath.Join(dir, c.Bundle)
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "dashboard import: %s: cell %d %s: no bundle %s (not run yet?): the cell is kept without a run\n", indexPath, i, want, c.Bundle)
			missing++
			rec.Cells = append(rec.Cells, sc)
			continue
		}
		res, err := importCell(ctx, st, dir, c.Bundle, opt)
		if err != nil {
			return false, fmt.Errorf("cell %d: %s: %w", i, c.Bundle, err)
		}
		id := res.ID
		if res.Existing {
			fmt.Fprintf(stdout, "%s: run %s (imported before; nothing new stored)\n", path, id)
		} else {
			fmt.Fprintf(stdout, "%s: run %s (%s, %d traces, %d records)\n", path, id, res.Problem, res.Traces, res.Records)
		}
		sc.RunID = id
		runs++
		rec.Cells = append(rec.Cells, sc)
	}
	if missing > 0 {
		rec.Status = store.StatusInterrupted
	}
	if opt.once {
		if id, err := sameSweep(ctx, st, rec.Cells); err != nil || id != "" {
			if id != "" {
				fmt.Fprintf(stdout, "%s: sweep %s (imported before; nothing new stored)\n", indexPath, id)
			}
			return false, err
		}
	}
	id, err := st.PutSweep(ctx, rec)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "%s: sweep %s (%d cells, %d runs imported, %d missing)\n", indexPath, id, len(cells), runs, missing)
	return true, nil
}

// importCell imports one cell's bundle: a regular file inside the sweep's
// directory (no link out of it, no FIFO or device, opened without
// blocking), at most opt.maxBundle bytes, counted in opt.reserve's budget
// while it streams into the store.
func importCell(ctx context.Context, st store.Backend, dir, name string, opt sweepImport) (*bundle.Imported, error) {
	f, _, err := datapath.OpenIn(dir, name, opt.maxBundle)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opt.reserve != nil {
		release, err := opt.reserve(server.ImportMemory, "an import of "+name)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	r := io.Reader(f)
	if opt.maxBundle > 0 {
		r = io.LimitReader(f, opt.maxBundle)
	}
	return bundle.ImportInto(ctx, st, bufio.NewReaderSize(r, 1<<16))
}

// sameSweep returns the id of a stored sweep whose cells are cells' runs
// ("" none).
func sameSweep(ctx context.Context, st store.Backend, cells []store.Cell) (string, error) {
	for off := 0; ; off += 100 {
		list, total, err := st.ListSweeps(ctx, off, 100)
		if err != nil {
			return "", err
		}
		for _, sw := range list {
			full, err := st.GetSweep(ctx, sw.ID)
			if err != nil {
				continue // deleted meanwhile
			}
			if sameCells(full.Cells, cells) {
				return sw.ID, nil
			}
		}
		if off+100 >= total || len(list) == 0 {
			return "", nil
		}
	}
}

func sameCells(a, b []store.Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].RunID != b[i].RunID || a[i].RunID == "" {
			return false
		}
	}
	return true
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
