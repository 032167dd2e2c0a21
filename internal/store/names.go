package store

import (
	"slices"
	"strings"
)

// DefaultName is the readable name a run gets when it enters the store
// without one (PutRun, an import's Commit, on every backend): its problem
// and its algorithms, each once, named as its traces are ("gflasso:
// bc-ssfw-as + slack collapse, bcfw"), cut to MaxName characters. The
// user may rename the run (Update); a name given is kept as it is.
func DefaultName(problem string, algos []string) string {
	var seen []string
	for _, a := range algos {
		if a != "" && !slices.Contains(seen, a) {
			seen = append(seen, a)
		}
	}
	name := problem
	if len(seen) > 0 {
		name += ": " + strings.Join(seen, ", ")
	}
	if r := []rune(name); len(r) > MaxName {
		name = string(r[:MaxName-1]) + "…"
	}
	return name
}

// defaultNameOf is r's DefaultName: the names of its first replication's
// traces, or of its spec's algorithms when it has no traces.
func defaultNameOf(r *Run) string {
	var algos []string
	for _, t := range r.Traces {
		if t.Replication == 0 {
			algos = append(algos, t.Algo)
		}
	}
	if len(r.Traces) == 0 {
		for _, a := range r.Spec.Algorithms {
			algos = append(algos, a.Algo)
		}
	}
	return DefaultName(r.Spec.Problem, algos)
}

// NameNew gives r its DefaultName when it has no name, as every backend's
// PutRun does before it checks and stores the run.
func NameNew(r *Run) {
	if r.Name == "" {
		r.Name = defaultNameOf(r)
	}
}

// GivenName is r's name unless it is r's DefaultName, then "": what a
// bundle of r carries, so that a run named by default exports as it was
// made or imported (a store gives the default back on import) and only a
// name someone chose travels.
func GivenName(r *Run) string {
	if r.Name == defaultNameOf(r) {
		return ""
	}
	return r.Name
}
