package session

import (
	"maps"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// DefaultMaxFile bounds the size of a data file a run may read.
const DefaultMaxFile = 256 << 20

// resolvePaths confines the data-file parameters the user gave (kind Path)
// to the server's data folders, by the one rule of package datapath: an
// upload by its hash (upload:SHA256, in Options.UploadDir) or a path
// relative to Options.DataDir; an absolute or climbing path is refused
// before anything is opened, links are followed and must stay inside, the
// file must be regular and at most MaxFile bytes. The parameter is
// rewritten to the file found. Errors name the parameter and the rule, and
// quote at most 40 characters of the value.
func (m *Manager) resolvePaths(sc *scenarios.Scenario, given spec.Params, vals scenarios.Values) error {
	return m.folders().ResolveSpec(sc, given, vals)
}

// folders are the data folders of the manager's runs.
func (m *Manager) folders() datapath.Folders {
	return datapath.Folders{Data: m.opts.DataDir, Uploads: m.opts.UploadDir, MaxFile: m.maxFile()}
}

// Folders are the data folders of the manager's runs (see resolvePaths).
func (m *Manager) Folders() datapath.Folders { return m.folders() }

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

// Quote quotes at most 40 characters of s, escaped as a Go string, with an
// ellipsis when s is longer: what an error may show of the user's input.
func Quote(s string) string { return datapath.Quote(s) }

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
