// Package verify compares a run's traces with those of a re-run of the same
// spec, field by field: what `dashboard verify` and the dashboard's Verify
// action report. A run is a pure function of (spec, seed, version) (ARCHITECTURE.md,
// "Records"), so every field of every record, and every trace's summary, must be
// identical, bit for bit, except those that are wall-clock by nature
// (Ignored).
//
// Numbers are compared by their bits, every NaN being one value: −0 and +0
// differ, as do two floats one unit in the last place apart.
package verify

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// Ignored names the fields left out of the comparison because they measure
// wall-clock time: the record's fields declared wall clock
// (internal/recordfields: time_s) and a summary's time_s. Nothing else
// is: counters, step kinds, γ, batch sizes, objectives, gaps, sampled
// gradients' errors, problem-specific values (extra), statuses and messages
// are all compared.
var Ignored = recordfields.WallClock

// Trace is one (algorithm, replication) of a run, as stored or re-run.
type Trace struct {
	Algo        string
	Replication int
	Seed        int64
	// Status is the trace's own status when it says one ("" reads as its
	// summary's); a finished trace's must be its summary's.
	Status string
	// Partial marks a trace that did not finish (cancelled, interrupted,
	// still live when exported): its records are compared with the re-run's
	// first ones, and its summary is not compared.
	Partial bool
	Summary *solver.Summary // nil: none
	Records []solver.Record
}

// Diff is the first difference found.
type Diff struct {
	Trace       int    // the trace's index in the run
	Algo        string // its algorithm
	Replication int    // and replication
	// Record is the index of the differing record in the trace, -1 when
	// the difference is in the trace itself (its identity, its number of
	// records, its summary); K is then -1 too.
	Record, K int
	// Field names what differs: a record's field ("gap", "extra.dual"),
	// "summary.status", "records" (their number), "traces" (theirs).
	Field string
	// Want is the stored (or bundled) value, Got the re-run's.
	Want, Got string
}

// String says where the difference is and gives both values.
func (d *Diff) String() string {
	where := fmt.Sprintf("trace %d (%s #%d)", d.Trace, d.Algo, d.Replication)
	if d.Field == "traces" {
		where = "the run"
	} else if d.Record >= 0 {
		where += fmt.Sprintf(" record %d (k = %d)", d.Record, d.K)
	}
	return fmt.Sprintf("%s, field %s: stored %s, re-run %s", where, d.Field, d.Want, d.Got)
}

// Result is the outcome of a comparison.
type Result struct {
	Records int   // records compared (and found identical, when Diff is nil)
	Diff    *Diff // the first difference, or nil
	// Partial counts the traces compared as a prefix (Trace.Partial).
	Partial int
	// Forced counts the stored records evaluated where the re-run's are
	// not: evaluations forced by the steps of a paused run (a session asks
	// for every step it takes), which the spec does not hold. Such a
	// record is compared without its evaluation (objective, gap, the
	// sampled gradient's error and the metrics only it has); everything
	// else in it must be identical. The cadence is not moved by them, so
	// the other records are compared whole.
	Forced int
}

// OK reports whether everything compared was identical.
func (r Result) OK() bool { return r.Diff == nil }

// Compare compares the stored traces with the re-run's, in order, and
// stops at the first difference.
func Compare(want, got []Trace) Result {
	var res Result
	for i := range want {
		if i >= len(got) {
			res.Diff = &Diff{Trace: i, Algo: want[i].Algo, Replication: want[i].Replication, Record: -1, K: -1,
				Field: "traces", Want: strconv.Itoa(len(want)), Got: strconv.Itoa(len(got))}
			return res
		}
		n, f, d := compareTrace(i, &want[i], &got[i])
		res.Records += n
		res.Forced += f
		if want[i].Partial {
			res.Partial++
		}
		if d != nil {
			res.Diff = d
			return res
		}
	}
	if len(got) > len(want) {
		t := &got[len(want)]
		res.Diff = &Diff{Trace: len(want), Algo: t.Algo, Replication: t.Replication, Record: -1, K: -1,
			Field: "traces", Want: strconv.Itoa(len(want)), Got: strconv.Itoa(len(got))}
	}
	return res
}

// compareTrace returns the number of identical records, how many of them
// were compared without a forced evaluation (Result.Forced), and the first
// difference.
func compareTrace(i int, w, g *Trace) (int, int, *Diff) {
	diff := func(rec, k int, field, want, got string) *Diff {
		return &Diff{Trace: i, Algo: w.Algo, Replication: w.Replication, Record: rec, K: k, Field: field, Want: want, Got: got}
	}
	switch {
	case w.Algo != g.Algo:
		return 0, 0, diff(-1, -1, "algo", strconv.Quote(w.Algo), strconv.Quote(g.Algo))
	case w.Replication != g.Replication:
		return 0, 0, diff(-1, -1, "replication", strconv.Itoa(w.Replication), strconv.Itoa(g.Replication))
	case w.Seed != g.Seed:
		return 0, 0, diff(-1, -1, "seed", strconv.FormatInt(w.Seed, 10), strconv.FormatInt(g.Seed, 10))
	}
	// the summary (compared below) says how the trace ended; a trace status
	// that says otherwise is a damaged or edited bundle: one that would
	// make the trace unfinished is said first, another after the summary
	badStatus := w.Summary != nil && w.Status != "" && w.Status != w.Summary.Status
	statusDiff := func() *Diff {
		return diff(-1, -1, "status", strconv.Quote(w.Status), strconv.Quote(w.Summary.Status)+" (the stored summary's)")
	}
	if badStatus && unfinishedStatus(w.Status) {
		return 0, 0, statusDiff()
	}
	n, forced := 0, 0
	for j := range w.Records {
		if j >= len(g.Records) {
			break
		}
		wr := &w.Records[j]
		if wr.Evaluated() && !g.Records[j].Evaluated() {
			// an evaluation the re-run does not make: forced by a step
			u := withoutEvaluation(wr, &g.Records[j])
			wr = &u
			forced++
		}
		if field, a, b := Record(wr, &g.Records[j]); field != "" {
			return n, forced, diff(j, w.Records[j].K, field, a, b)
		}
		n++
	}
	if len(w.Records) != len(g.Records) && !(w.Partial && len(g.Records) >= len(w.Records)) {
		// the first record one side has and the other has not
		j := min(len(w.Records), len(g.Records))
		k, want, got := 0, "none", "none"
		if j < len(w.Records) {
			k, want = w.Records[j].K, "a record"
		} else {
			k, got = g.Records[j].K, "a record"
		}
		d := diff(j, k, "records", want, got)
		d.Want += fmt.Sprintf(" (%d records in all)", len(w.Records))
		d.Got += fmt.Sprintf(" (%d records in all)", len(g.Records))
		return n, forced, d
	}
	if w.Partial {
		return n, forced, nil
	}
	if field, a, b := Summary(w.Summary, g.Summary); field != "" {
		return n, forced, diff(-1, -1, "summary."+field, a, b)
	}
	if badStatus {
		return n, forced, statusDiff()
	}
	return n, forced, nil
}

// withoutEvaluation is the stored record w as the re-run's g makes it
// without an evaluation: no objective, gap or sampled gradient's error,
// and only the metrics g has too.
func withoutEvaluation(w, g *solver.Record) solver.Record {
	u := *w
	u.Extra = nil
	for k, v := range w.Extra {
		if _, ok := g.Extra[k]; ok && !recordfields.IsSlot(k) {
			if u.Extra == nil {
				u.Extra = map[string]float64{}
			}
			u.Extra[k] = v
		}
	}
	for i := range recordfields.Fields {
		if f := &recordfields.Fields[i]; f.Evaluated && f.Kind == recordfields.OptFloat && !f.IsSlot() {
			f.ClearOpt(&u)
		}
	}
	return u
}

// Record compares two records field by declared field (but the wall-clock
// ones), in the order of the record's JSON, and returns the first
// differing field with both values, or "".
func Record(w, g *solver.Record) (field, want, got string) {
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if f.WallClock {
			continue
		}
		switch f.Kind {
		case recordfields.Int:
			if a, b := f.Int(w), f.Int(g); a != b {
				return f.JSON, strconv.Itoa(a), strconv.Itoa(b)
			}
		case recordfields.Float:
			if a, b := f.Float(w), f.Float(g); !Same(a, b) {
				return f.JSON, Format(a), Format(b)
			}
		case recordfields.String:
			if a, b := f.Str(w), f.Str(g); a != b {
				return f.JSON, strconv.Quote(a), strconv.Quote(b)
			}
		case recordfields.OptFloat:
			a, okA := f.Opt(w)
			b, okB := f.Opt(g)
			if okA != okB || !Same(a, b) {
				return f.JSON, formatOpt(a, okA), formatOpt(b, okB)
			}
		case recordfields.Metrics:
			if field, want, got := metrics(w, g); field != "" {
				return field, want, got
			}
		}
	}
	return "", "", ""
}

func formatOpt(v float64, ok bool) string {
	if !ok {
		return FormatOpt(nil)
	}
	return FormatOpt(&v)
}

// metrics compares the problem-specific metrics.
func metrics(w, g *solver.Record) (field, want, got string) {
	keys := make([]string, 0, len(w.Extra)+len(g.Extra))
	for k := range w.Extra {
		keys = append(keys, k)
	}
	for k := range g.Extra {
		if _, ok := w.Extra[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if recordfields.IsSlot(k) {
			continue
		}
		a, inW := w.Extra[k]
		b, inG := g.Extra[k]
		if inW != inG || !Same(a, b) {
			fa, fb := Format(a), Format(b)
			if !inW {
				fa = "absent"
			}
			if !inG {
				fb = "absent"
			}
			return "extra." + k, fa, fb
		}
	}
	return "", "", ""
}

// Summary compares two summaries (but Ignored fields) and returns the
// first differing field, or "".
func Summary(w, g *solver.Summary) (field, want, got string) {
	switch {
	case w == nil && g == nil:
		return "", "", ""
	case w == nil || g == nil:
		show := func(s *solver.Summary) string {
			if s == nil {
				return "none"
			}
			return "a summary (status " + s.Status + ")"
		}
		return "summary", show(w), show(g)
	}
	switch {
	case w.Status != g.Status:
		return "status", strconv.Quote(w.Status), strconv.Quote(g.Status)
	case w.Iters != g.Iters:
		return "iters", strconv.Itoa(w.Iters), strconv.Itoa(g.Iters)
	case !Same(w.Passes, g.Passes):
		return "passes", Format(w.Passes), Format(g.Passes)
	case !Same(w.Objective, g.Objective):
		return "objective", Format(w.Objective), Format(g.Objective)
	case !Same(w.Gap, g.Gap):
		return "gap", Format(w.Gap), Format(g.Gap)
	case w.Message != g.Message:
		return "message", strconv.Quote(w.Message), strconv.Quote(g.Message)
	}
	return "", "", ""
}

// Same reports whether a and b are the same number: the same bits, or both
// NaN.
func Same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// Format writes v in the shortest form that reads back to the same number,
// so that two values that differ are written differently.
func Format(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// FormatOpt is Format, or "null".
func FormatOpt(p *float64) string {
	if p == nil {
		return "null"
	}
	return Format(*p)
}

// FromBundle returns a run's traces for Compare, marking those that did not
// finish (Partial): a trace whose status (or its summary's) is cancelled,
// interrupted or live, or that has no summary in a run that did not end
// done.
func FromBundle(b *bundle.Bundle) []Trace {
	out := make([]Trace, len(b.Traces))
	for i := range b.Traces {
		t := &b.Traces[i]
		out[i] = Trace{Algo: t.Algo, Replication: t.Replication, Seed: t.Seed, Status: t.Status, Summary: t.Summary, Records: t.Records,
			Partial: unfinished(b.Status, t)}
	}
	return out
}

func unfinished(runStatus string, t *bundle.Trace) bool {
	// the summary's status when there is one (a trace status that says
	// otherwise is a difference, not a licence to compare less)
	st := t.Status
	if t.Summary != nil {
		st = t.Summary.Status
	}
	switch {
	case unfinishedStatus(st):
		return true
	case st == "":
		return t.Summary == nil && runStatus != "" && runStatus != store.StatusDone
	}
	return false
}

// unfinishedStatus reports whether a trace with this status did not finish.
func unfinishedStatus(st string) bool {
	switch st {
	case solver.StatusCancelled, store.StatusInterrupted, store.StatusQueued, store.StatusRunning, store.StatusPaused:
		return true
	}
	return false
}

// Report is the one-line report of a comparison: "reproduced: N records
// identical" or "differs: " and the first difference.
func Report(res Result) string {
	partial := ""
	if res.Partial > 0 {
		partial = fmt.Sprintf(" (%d unfinished traces compared with the re-run's first records)", res.Partial)
	}
	if res.Forced > 0 {
		partial += ForcedNote(res.Forced)
	}
	if res.OK() {
		return fmt.Sprintf("reproduced: %d records identical%s", res.Records, partial)
	}
	return fmt.Sprintf("differs: %s (after %d identical records)%s", res.Diff, res.Records, partial)
}

// ForcedNote says plainly what a comparison of a stepped run leaves out.
func ForcedNote(n int) string {
	return fmt.Sprintf(" (%d records evaluated at a step of a paused run, which its spec does not hold: compared without their evaluations; such an evaluation may also end a run sooner, on its gap tolerance or stall rule, which a re-run does not repeat)", n)
}

// Outcome is the store's verification for a comparison.
func Outcome(res Result) *store.Verification {
	v := &store.Verification{Outcome: store.VerifyReproduced, Records: res.Records}
	if res.Forced > 0 {
		v.Detail = strings.TrimSpace(ForcedNote(res.Forced))
	}
	if !res.OK() {
		v.Outcome, v.Detail = store.VerifyDiffers, Clip(res.Diff.String()+forcedSuffix(res.Forced), store.MaxVerifyDetail)
	}
	return v
}

// quoted matches a quoted string in an error's text, with the ellipsis
// that marks a clipped one.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"…?`)

// Scrub is the text of an error as a verification keeps and shows it,
// where any client reads it: a data file's parse error is reduced to the
// file, line and column, and every quoted string (which may be a piece of
// a file's content) is elided. Nothing of a file's content is kept.
func Scrub(err error) string {
	if err == nil {
		return ""
	}
	var pe *dataio.ParseError
	if errors.As(err, &pe) {
		where := filepath.Base(pe.File)
		if pe.Line > 0 {
			where += fmt.Sprintf(", line %d", pe.Line)
		}
		if pe.Col > 0 {
			where += fmt.Sprintf(", column %d", pe.Col)
		}
		return where + ": the data file does not parse (its content is not shown)"
	}
	return quoted.ReplaceAllString(err.Error(), `"…"`)
}

func forcedSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return ForcedNote(n)
}

// Clip cuts s to at most n characters, marking the cut.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
