package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// Data that travels with a run.
//
// A run on a worker reads its data files on another machine, so each file
// a run reads goes with it as a reference (DataRef) checked by content:
//
//   - a file that travels in the store (an upload of a front-end server, or
//     a file of the disk of `dashboard submit`) is kept there by the
//     SHA-256 of its content, at most MaxDataFile bytes, counted in the
//     queue's quota (pgstore.PutDataFile); the worker fetches it (once per
//     content) and every worker reads the same bytes;
//   - a file of the submitter's data folder (a server's -data) is named by
//     its path inside that folder and its SHA-256: the worker reads it from
//     its own -data folder and checks the hash;
//   - the OCR set a run reads by default (ssvm-ocr without a data file) is
//     named by its SHA-256: the worker checks its own default OCR file.
//
// A worker that lacks a file or holds other bytes fails the run at once,
// naming the file, never running on other data.

// DataRef is a data file a run reads.
type DataRef struct {
	Param  string `json:"param"`  // the parameter that names it (x, y, data)
	Name   string `json:"name"`   // the file as the spec names it
	SHA256 string `json:"sha256"` // its content's hash
	Bytes  int64  `json:"bytes"`
	// Stored: kept in the store; else DataPath is its path inside the
	// workers' -data folder, or Default says it is the default OCR set.
	Stored   bool   `json:"stored,omitempty"`
	DataPath string `json:"data_path,omitempty"`
	Default  bool   `json:"default,omitempty"`
}

// MaxDataFile bounds a data file that travels in the store.
const MaxDataFile = 64 << 20

// Files resolves, on the submitter's side, the data file that the value of
// a data-file parameter names: local is the file to read here; rel, when
// not "", is its path inside the data folder every worker has (-data),
// else the file travels in the store. Its errors name the parameter.
type Files func(p scenarios.Param, value string) (local, rel string, err error)

// LocalFiles is the Files of `dashboard submit`: a value is a path on its
// disk, and the file travels in the store.
func LocalFiles(p scenarios.Param, value string) (string, string, error) {
	return value, "", nil
}

// dataRefs resolves the run's data files (a sweep's cells share cache,
// which maps a local file to its reference), keeping in the store those
// that travel there.
func (q *Queue) dataRefs(ctx context.Context, sc *scenarios.Scenario, vals scenarios.Values, files Files, cache map[string]DataRef) ([]DataRef, error) {
	var refs []DataRef
	for _, p := range sc.Params {
		if p.Kind != scenarios.Path {
			continue
		}
		field := "params." + p.Name
		v := strings.TrimSpace(vals.Str(p.Name))
		var ref DataRef
		var err error
		switch {
		case v == "" && p.Format == "ocr":
			ref, err = q.defaultOCR(field, cache)
		case v == "":
			continue
		case files == nil:
			return nil, spec.Errorf(field, "names a data file, which this queue cannot send to its workers")
		default:
			ref, err = q.fileRef(ctx, files, p, field, v, cache)
		}
		if err != nil {
			return nil, err
		}
		ref.Param = p.Name
		refs = append(refs, ref)
	}
	return refs, nil
}

// defaultOCR is the reference to the OCR set a run reads by default.
func (q *Queue) defaultOCR(field string, cache map[string]DataRef) (DataRef, error) {
	local, err := ssvm.ResolveOCR("")
	if err != nil {
		return DataRef{}, spec.Errorf(field, "%v", err)
	}
	if ref, ok := cache[local]; ok {
		return ref, nil
	}
	sum, n, err := hashFile(local)
	if err != nil {
		return DataRef{}, spec.Errorf(field, "the default OCR set: %v", err)
	}
	ref := DataRef{Name: filepath.Base(local), SHA256: sum, Bytes: n, Default: true}
	cache[local] = ref
	return ref, nil
}

// fileRef is the reference to the file that value names.
func (q *Queue) fileRef(ctx context.Context, files Files, p scenarios.Param, field, value string, cache map[string]DataRef) (DataRef, error) {
	local, rel, err := files(p, value)
	if err != nil {
		return DataRef{}, err
	}
	if ref, ok := cache[local+"\x00"+rel]; ok {
		ref.Name = value
		return ref, nil
	}
	ref := DataRef{Name: value}
	if rel != "" {
		if ref.SHA256, ref.Bytes, err = hashFile(local); err != nil {
			return DataRef{}, spec.Errorf(field, "%v", err)
		}
		ref.DataPath = filepath.ToSlash(rel)
	} else {
		b, err := readCapped(local, MaxDataFile)
		if err != nil {
			return DataRef{}, spec.Errorf(field, "%v", err)
		}
		ref.SHA256, err = q.st.PutDataFile(ctx, b, q.Quota)
		if errors.Is(err, pgstore.ErrDataQuota) {
			return DataRef{}, spec.Errorf(field, "%v", err)
		}
		if err != nil {
			return DataRef{}, err
		}
		ref.Bytes, ref.Stored = int64(len(b)), true
	}
	cache[local+"\x00"+rel] = ref
	return ref, nil
}

// readCapped reads a regular file of at most max bytes.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s has %d bytes, over the %d (%d MiB) a data file may have to travel with its run", filepath.Base(path), st.Size(), max, max>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s has over %d bytes", filepath.Base(path), max)
	}
	return b, nil
}

// hashFile returns the SHA-256 and size of a file.
func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func short(sum string) string { return sum[:min(len(sum), 12)] }

// materialize makes the run's data files ready on this worker and points
// the spec's parameters at them: a file kept in the store is fetched into
// the worker's cache (once per content), a file of the data folder is
// checked in the worker's own -data, the default OCR set against the
// worker's own. The error names the file and says what is wrong.
func (w *Worker) materialize(ctx context.Context, id string, sp *spec.Run) error {
	raw, err := w.cfg.Store.DataRefs(ctx, id)
	if err != nil || raw == nil {
		return err
	}
	var refs []DataRef
	if err := json.Unmarshal(raw, &refs); err != nil {
		return fmt.Errorf("the run's data files: %w", err)
	}
	for _, ref := range refs {
		path, err := w.dataFile(ctx, ref)
		if err != nil {
			return fmt.Errorf("params.%s: %w", ref.Param, err)
		}
		if path != "" {
			if sp.Params == nil {
				sp.Params = spec.Params{}
			}
			sp.Params[ref.Param] = path
		}
	}
	return nil
}

// dataFile returns the local path of a run's data file ("" for the
// default OCR set, which the worker finds as any run does).
func (w *Worker) dataFile(ctx context.Context, ref DataRef) (string, error) {
	switch {
	case ref.Stored:
		return w.fetch(ctx, ref)
	case ref.Default:
		local, err := ssvm.ResolveOCR("")
		if err != nil {
			return "", fmt.Errorf("the run reads the default OCR set %s (sha256 %s…), which this worker lacks: %w", ref.Name, short(ref.SHA256), err)
		}
		return "", checkHash(local, ref, "the default OCR set "+local)
	}
	if w.cfg.DataDir == "" {
		return "", fmt.Errorf("the run reads %s from the data folder, and this worker has none (-data)", ref.DataPath)
	}
	what := ref.DataPath + " in this worker's -data folder " + w.cfg.DataDir
	if _, err := os.Lstat(filepath.Join(w.cfg.DataDir, filepath.FromSlash(ref.DataPath))); errors.Is(err, os.ErrNotExist) && datapath.Local(ref.DataPath) {
		return "", fmt.Errorf("this worker lacks %s", what)
	}
	// the one rule of a spec's data files (package datapath)
	local, err := datapath.Folders{Data: w.cfg.DataDir, DataFlag: "-data DIR"}.Resolve("data_path", ref.DataPath, "")
	if err != nil {
		return "", fmt.Errorf("the run's data file: %w", err)
	}
	return local, checkHash(local, ref, what)
}

// checkHash checks that local holds the bytes ref names.
func checkHash(local string, ref DataRef, what string) error {
	sum, _, err := hashFile(local)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("this worker lacks %s", what)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	if sum != ref.SHA256 {
		return fmt.Errorf("%s holds other bytes (sha256 %s…) than the run's file (sha256 %s…): the run is not run on other data", what, short(sum), short(ref.SHA256))
	}
	return nil
}

// fetch returns the worker's copy of a file kept in the store, fetching it
// into the cache folder when it is not there yet.
func (w *Worker) fetch(ctx context.Context, ref DataRef) (string, error) {
	dir := filepath.Join(w.cfg.CacheDir, ref.SHA256)
	local := filepath.Join(dir, sanitiseName(ref.Name))
	if sum, _, err := hashFile(local); err == nil && sum == ref.SHA256 {
		return local, nil
	}
	b, err := w.cfg.Store.DataFile(ctx, ref.SHA256)
	if err != nil {
		return "", fmt.Errorf("the run's file %s: %w", ref.Name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the worker's data cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".fetch-")
	if err != nil {
		return "", fmt.Errorf("the worker's data cache: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("the worker's data cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("the worker's data cache: %w", err)
	}
	return local, nil
}

// sanitiseName keeps a file name's base, letters, digits, dots, dashes and
// underscores (its extension tells some readers the format).
func sanitiseName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	s := strings.TrimLeft(string(b), ".")
	if s == "" {
		return "data"
	}
	return s
}
