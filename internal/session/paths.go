package session

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// DefaultMaxFile bounds the size of a data file a run may read.
const DefaultMaxFile = 256 << 20

// resolvePaths confines the data-file parameters the user gave (kind Path)
// to the server's data folders: Options.DataDir and Options.UploadDir. A
// relative path is taken inside the data directory; symbolic links are
// resolved before the check, so a link cannot lead out; the file must be a
// regular file (no device, FIFO or /proc entry) of at most MaxFile bytes. An
// OCR parameter may name a directory holding the OCR file, which is then
// checked in its place. The parameter is rewritten to the resolved path.
// Parameters left at their defaults are untouched. Errors name the
// parameter and the rule, and quote at most 40 characters of the path.
func (m *Manager) resolvePaths(sc *scenarios.Scenario, given spec.Params, vals scenarios.Values) error {
	var roots []string
	root := ""
	for i, d := range []string{m.opts.DataDir, m.opts.UploadDir} {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		} else if i == 1 && os.IsNotExist(err) {
			// The uploads folder is made on the first upload.
		} else {
			continue
		}
		if i == 0 {
			root = abs
		}
		roots = append(roots, abs)
	}
	folders := "the server's data folders (the -data directory and the uploads)"
	for _, p := range sc.Params {
		if p.Kind != scenarios.Path {
			continue
		}
		v, ok := given[p.Name]
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		field := "params." + p.Name
		v = strings.TrimSpace(v)
		full := v
		if !filepath.IsAbs(full) {
			if root == "" {
				return spec.Errorf(field, "is a relative path (%s) but the server has no data directory (-data DIR); upload the file instead", Quote(v))
			}
			full = filepath.Join(root, full)
		}
		full = filepath.Clean(full)
		// Refuse a path outside the folders (a relative one: outside the
		// data directory) before touching it, then resolve its links and
		// check again.
		if !withinAny(roots, full) || (!filepath.IsAbs(v) && !within(root, full)) {
			return spec.Errorf(field, "must be a file inside %s, got %s", folders, Quote(v))
		}
		real, err := filepath.EvalSymlinks(full)
		if err != nil {
			return spec.Errorf(field, "no readable file %s inside %s", Quote(v), folders)
		}
		st, err := os.Stat(real)
		if err == nil && st.IsDir() && p.Format == "ocr" {
			real = filepath.Join(real, ssvm.OCRFile)
			if r2, err2 := filepath.EvalSymlinks(real); err2 == nil {
				real = r2
			}
			st, err = os.Stat(real)
		}
		switch {
		case !withinAny(roots, real):
			return spec.Errorf(field, "must be a file inside %s (symbolic links are followed), got %s", folders, Quote(v))
		case err != nil:
			return spec.Errorf(field, "no readable file %s inside %s", Quote(v), folders)
		case !st.Mode().IsRegular():
			return spec.Errorf(field, "must be a regular file (not a directory, device or pipe), got %s", Quote(v))
		case st.Size() > m.maxFile():
			return spec.Errorf(field, "the file %s has %d bytes, over the limit of %d", Quote(v), st.Size(), m.maxFile())
		}
		vals[p.Name] = real
	}
	return nil
}

// CheckPaths checks the data files a spec names as a run of it would (the
// server's data folders, a regular readable file within MaxFile), without
// building anything: a sweep is refused when posted rather than failing
// in every cell. The spec is not changed.
func (m *Manager) CheckPaths(sp spec.Run) error {
	sp.Params = maps.Clone(sp.Params)
	sp.Algorithms = append([]spec.Algo(nil), sp.Algorithms...)
	sc, vals, err := scenarios.Resolve(&sp)
	if err != nil {
		return err
	}
	return m.resolvePaths(sc, sp.Params, vals)
}

func (m *Manager) maxFile() int64 {
	if m.opts.MaxFile > 0 {
		return m.opts.MaxFile
	}
	return DefaultMaxFile
}

func withinAny(roots []string, full string) bool {
	for _, r := range roots {
		if within(r, full) {
			return true
		}
	}
	return false
}

// within reports whether the clean absolute path full lies inside root.
func within(root, full string) bool {
	rel, err := filepath.Rel(root, full)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Quote quotes at most 40 characters of s, escaped as a Go string, with an
// ellipsis when s is longer: what an error may show of the user's input.
func Quote(s string) string {
	const max = 40
	r := []rune(s)
	if len(r) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(string(r[:max])) + "…"
}

// ResolveDataFile confines the value of the data-file parameter p as a
// run's data files are (see resolvePaths) and returns the file it names (a
// front end that queues runs for workers sends that file with the run).
func (m *Manager) ResolveDataFile(p scenarios.Param, value string) (string, error) {
	vals := scenarios.Values{}
	sc := &scenarios.Scenario{Params: []scenarios.Param{p}}
	if err := m.resolvePaths(sc, spec.Params{p.Name: value}, vals); err != nil {
		return "", err
	}
	return vals[p.Name], nil
}
