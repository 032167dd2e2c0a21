package spec

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a run opened from outside (Run.Outside).
const (
	// DefaultOutsideIters is the largest k a run opened from outside may
	// log when it names no iters.
	DefaultOutsideIters = 10_000
	// MaxOutsideLabel bounds the characters of its problem label.
	MaxOutsideLabel = 200
	// MaxOutsideName bounds the characters of a trace's name.
	MaxOutsideName = 64
)

// normalizeOutside checks the spec of a run opened from outside: a problem
// label (free text), one algorithm per trace naming it (unique names, no
// other parameter, no " + ", which separates a variant in a trace's name),
// one replication, no seed, no limits but iters, the largest k a trace may
// log (default DefaultOutsideIters). Its records come from elsewhere, so
// nothing here can be re-run.
func (r *Run) normalizeOutside() error {
	if err := outsideText("problem", r.Problem, MaxOutsideLabel); err != nil {
		return err
	}
	if len(r.Params) > 0 {
		return Errorf("params", "a run opened from outside has no parameters (its problem is a label), got %d", len(r.Params))
	}
	if len(r.Algorithms) == 0 {
		return Errorf("algorithms", "at least one algorithm (a trace's name) is required")
	}
	if len(r.Algorithms) > MaxAlgorithms {
		return Errorf("algorithms", "at most %d algorithms per run, got %d", MaxAlgorithms, len(r.Algorithms))
	}
	seen := map[string]int{}
	for i, a := range r.Algorithms {
		p := "algorithms[" + strconv.Itoa(i) + "]."
		if err := outsideText(p+"algo", a.Algo, MaxOutsideName); err != nil {
			return err
		}
		if strings.Contains(a.Algo, " + ") {
			return Errorf(p+"algo", `must not contain " + " (it separates a variant in a trace's name), got %q`, a.Algo)
		}
		if j, ok := seen[a.Algo]; ok {
			return Errorf(p+"algo", "must differ from algorithms[%d] (each names one trace), got %q twice", j, a.Algo)
		}
		seen[a.Algo] = i
		if (a != Algo{Algo: a.Algo}) {
			return Errorf(p+"algo", "a trace of a run opened from outside has a name only, no parameters")
		}
	}
	if r.Replications == 0 {
		r.Replications = 1
	}
	if r.Replications != 1 {
		return Errorf("replications", "must be 1 for a run opened from outside (each trace is one algorithm), got %d", r.Replications)
	}
	if r.Seed != 0 {
		return Errorf("seed", "must be 0 for a run opened from outside (fwlab draws nothing), got %d", r.Seed)
	}
	if r.Iters == 0 {
		r.Iters = DefaultOutsideIters
	}
	if r.Iters < 1 || r.Iters > MaxIters {
		return Errorf("iters", "must be between 1 and %d (the largest k a trace may log), got %d", MaxIters, r.Iters)
	}
	if r.Passes != 0 || r.Gap != 0 || r.EvalEvery != 0 || r.StartPaused {
		return Errorf("outside", "a run opened from outside takes no passes, gap, eval_every or start_paused: fwlab does not run it")
	}
	return nil
}

// outsideText checks a label or a name: 1 to max characters of valid UTF-8,
// no control character.
func outsideText(field, s string, max int) error {
	if s == "" {
		return Errorf(field, "is required")
	}
	if !utf8.ValidString(s) {
		return Errorf(field, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return Errorf(field, "must be at most %d characters, got %d", max, n)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return Errorf(field, "must not contain control characters (a tab, a new line, NUL, …)")
	}
	if strings.TrimSpace(s) != s {
		return Errorf(field, "must not begin or end with white space, got %q", s)
	}
	return nil
}
