package session

import (
	"path/filepath"
	"strings"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// resolvePaths rewrites the data-file parameters the user gave (kind Path)
// against Options.DataDir: a relative path is taken inside the data
// directory, and no path may leave it, except an absolute path inside
// Options.UploadDir (the files users uploaded). Parameters left at their
// defaults are untouched. Without a data directory, paths are used as given.
func (m *Manager) resolvePaths(sc *scenarios.Scenario, given spec.Params, vals scenarios.Values) error {
	if m.opts.DataDir == "" {
		return nil
	}
	root, err := filepath.Abs(m.opts.DataDir)
	if err != nil {
		return spec.Errorf("params", "the server's data directory %q cannot be resolved: %v", m.opts.DataDir, err)
	}
	uploads := ""
	if m.opts.UploadDir != "" {
		if u, err := filepath.Abs(m.opts.UploadDir); err == nil {
			uploads = u
		}
	}
	for _, p := range sc.Params {
		if p.Kind != scenarios.Path {
			continue
		}
		v, ok := given[p.Name]
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		v = strings.TrimSpace(v)
		full := v
		if !filepath.IsAbs(full) {
			full = filepath.Join(root, full)
		}
		full = filepath.Clean(full)
		if !within(root, full) && (uploads == "" || !filepath.IsAbs(v) || !within(uploads, full)) {
			return spec.Errorf("params."+p.Name, "must be a file inside the server's data directory %s (or an uploaded file), got %q", root, v)
		}
		vals[p.Name] = full
	}
	return nil
}

// within reports whether the clean absolute path full lies inside root.
func within(root, full string) bool {
	rel, err := filepath.Rel(root, full)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
