package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/solver"
)

func sample() []Trace {
	recs := []solver.Record{
		{K: 0, Step: "none", Active: 1, Objective: solver.F(2), Gap: solver.F(1)},
		{K: 1, Passes: 0.5, Time: 0.01, Step: "fw", Gamma: 0.25, Batch: 10, Active: 2, FWSteps: 1},
		{K: 2, Passes: 1, Time: 0.02, Step: "drop", Gamma: math.NaN(), Batch: 10, Active: 1, AwaySteps: 1, Drops: 1,
			Objective: solver.F(1.25), Gap: solver.F(0.0123456789), GradErr: solver.F(3e-3), Extra: map[string]float64{"dual": 1.5, "test_err": 0.25}},
	}
	sum := &solver.Summary{Objective: 1.25, Gap: 0.0123456789, Iters: 2, Passes: 1, Time: 0.02, Status: "max_iters"}
	return []Trace{
		{Algo: "ssfw-as", Seed: 1, Summary: sum, Records: recs},
		{Algo: "ssfw-as", Replication: 1, Seed: 2, Summary: sum, Records: recs},
	}
}

// copyTraces deep-copies ts.
func copyTraces(ts []Trace) []Trace {
	out := make([]Trace, len(ts))
	for i, t := range ts {
		t.Records = append([]solver.Record(nil), t.Records...)
		for j := range t.Records {
			r := &t.Records[j]
			for _, p := range []**float64{&r.Objective, &r.Gap, &r.GradErr} {
				if *p != nil {
					v := **p
					*p = &v
				}
			}
			if r.Extra != nil {
				m := map[string]float64{}
				for k, v := range r.Extra {
					m[k] = v
				}
				r.Extra = m
			}
		}
		if t.Summary != nil {
			s := *t.Summary
			t.Summary = &s
		}
		out[i] = t
	}
	return out
}

func TestCompareIdentical(t *testing.T) {
	want := sample()
	got := copyTraces(want)
	// wall-clock fields differ on every re-run and are not compared
	for i := range got {
		for j := range got[i].Records {
			got[i].Records[j].Time *= 3
		}
		got[i].Summary.Time = 99
		// every NaN is one value
		got[i].Records[2].Gamma = math.Float64frombits(0x7FF8000000000abc)
	}
	res := Compare(want, got)
	if !res.OK() || res.Records != 6 {
		t.Fatalf("Compare = %+v (diff %v), want 6 identical records", res, res.Diff)
	}
}

func TestCompareFindsTheFirstDifference(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(ts []Trace)
		trace  int
		record int
		field  string
		want   string // the values, as "stored X, re-run Y"
		n      int    // records identical before it
	}{
		{"one digit of the gap", func(ts []Trace) { ts[1].Records[2].Gap = solver.F(0.0123456788) }, 1, 2, "gap", "stored 0.0123456789, re-run 0.0123456788", 5},
		{"one ulp of gamma", func(ts []Trace) { ts[0].Records[1].Gamma = math.Nextafter(0.25, 1) }, 0, 1, "gamma", "stored 0.25, re-run 0.25000000000000006", 1},
		{"negative zero", func(ts []Trace) { ts[0].Records[0].Gamma = math.Copysign(0, -1) }, 0, 0, "gamma", "stored 0, re-run -0", 0},
		{"k", func(ts []Trace) { ts[0].Records[1].K = 3 }, 0, 1, "k", "stored 1, re-run 3", 1},
		{"passes", func(ts []Trace) { ts[0].Records[1].Passes = 0.75 }, 0, 1, "passes", "stored 0.5, re-run 0.75", 1},
		{"step", func(ts []Trace) { ts[0].Records[1].Step = "away" }, 0, 1, "step", `stored "fw", re-run "away"`, 1},
		{"batch", func(ts []Trace) { ts[0].Records[1].Batch = 11 }, 0, 1, "batch", "stored 10, re-run 11", 1},
		{"active", func(ts []Trace) { ts[0].Records[1].Active = 3 }, 0, 1, "active", "stored 2, re-run 3", 1},
		{"fw_steps", func(ts []Trace) { ts[0].Records[1].FWSteps = 0 }, 0, 1, "fw_steps", "stored 1, re-run 0", 1},
		{"away_steps", func(ts []Trace) { ts[0].Records[2].AwaySteps = 2 }, 0, 2, "away_steps", "stored 1, re-run 2", 2},
		{"drops", func(ts []Trace) { ts[0].Records[2].Drops = 0 }, 0, 2, "drops", "stored 1, re-run 0", 2},
		{"cleanups", func(ts []Trace) { ts[0].Records[2].Cleanups = 1 }, 0, 2, "cleanups", "stored 0, re-run 1", 2},
		{"objective evaluated on one side only", func(ts []Trace) { ts[0].Records[1].Objective = solver.F(1.5) }, 0, 1, "objective", "stored null, re-run 1.5", 1},
		{"grad_err", func(ts []Trace) { ts[0].Records[2].GradErr = nil }, 0, 2, "grad_err", "stored 0.003, re-run null", 2},
		{"an extra value", func(ts []Trace) { ts[0].Records[2].Extra["dual"] = 1.5000001 }, 0, 2, "extra.dual", "stored 1.5, re-run 1.5000001", 2},
		{"an extra key missing", func(ts []Trace) { delete(ts[0].Records[2].Extra, "test_err") }, 0, 2, "extra.test_err", "stored 0.25, re-run absent", 2},
		{"an extra key added", func(ts []Trace) { ts[0].Records[2].Extra["aa"] = 0 }, 0, 2, "extra.aa", "stored absent, re-run 0", 2},
		{"a record fewer", func(ts []Trace) { ts[1].Records = ts[1].Records[:2] }, 1, 2, "records", "stored a record (3 records in all), re-run none (2 records in all)", 5},
		{"a record more", func(ts []Trace) {
			ts[1].Records = append(ts[1].Records, solver.Record{K: 3, Step: "fw"})
		}, 1, 3, "records", "stored none (3 records in all), re-run a record (4 records in all)", 6},
		{"summary status", func(ts []Trace) { ts[1].Summary.Status = "stalled" }, 1, -1, "summary.status", `stored "max_iters", re-run "stalled"`, 6},
		{"summary gap", func(ts []Trace) { ts[0].Summary.Gap = 0.5 }, 0, -1, "summary.gap", "stored 0.0123456789, re-run 0.5", 3},
		{"summary message", func(ts []Trace) { ts[0].Summary.Message = "x" }, 0, -1, "summary.message", `stored "", re-run "x"`, 3},
		{"seed", func(ts []Trace) { ts[1].Seed = 5 }, 1, -1, "seed", "stored 2, re-run 5", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := sample()
			got := copyTraces(want)
			c.edit(got)
			res := Compare(want, got)
			d := res.Diff
			if d == nil {
				t.Fatal("no difference found")
			}
			if d.Trace != c.trace || d.Record != c.record || d.Field != c.field || res.Records != c.n {
				t.Fatalf("found %+v after %d records, want trace %d record %d field %s after %d", *d, res.Records, c.trace, c.record, c.field, c.n)
			}
			if s := d.String(); !strings.Contains(s, c.want) || !strings.Contains(s, "field "+c.field) {
				t.Fatalf("the report %q does not say %q", s, c.want)
			}
			if c.record >= 0 && !strings.Contains(d.String(), "record ") {
				t.Fatalf("the report %q names no record", d.String())
			}
		})
	}
}

func TestComparePartialTraces(t *testing.T) {
	full := sample()
	stored := copyTraces(full)
	// a run cancelled after two records of its first trace
	stored[0].Records = stored[0].Records[:2]
	stored[0].Partial = true
	stored[0].Summary = &solver.Summary{Status: "cancelled"}
	res := Compare(stored, full)
	if !res.OK() || res.Records != 5 || res.Partial != 1 {
		t.Fatalf("Compare = %+v, %v; want 5 identical records, 1 partial trace", res, res.Diff)
	}
	// a partial trace still compares its records
	full[0].Records[1].Gamma = 0.5
	if res := Compare(stored, full); res.OK() || res.Diff.Field != "gamma" {
		t.Fatalf("Compare = %+v, want a gamma difference", res)
	}
	// a re-run with fewer records than the partial trace differs
	short := copyTraces(sample())
	short[0].Records = short[0].Records[:1]
	if res := Compare(stored, short); res.OK() || res.Diff.Field != "records" {
		t.Fatalf("Compare = %+v, want a records difference", res)
	}
}

func TestCompareTraceCounts(t *testing.T) {
	want := sample()
	if res := Compare(want, want[:1]); res.OK() || res.Diff.Field != "traces" || !strings.Contains(res.Diff.String(), "stored 2, re-run 1") {
		t.Fatalf("Compare = %+v", res)
	}
	if res := Compare(want[:1], want); res.OK() || res.Diff.Field != "traces" {
		t.Fatalf("Compare = %+v", res)
	}
}

// A stored record evaluated where the re-run's is not (a step of a paused
// run forced it) is compared without its evaluation, and counted and said;
// anything else in it that differs is still a difference, as is an
// evaluation the re-run makes and the stored run lacks.
func TestCompareForcedEvaluations(t *testing.T) {
	got := sample()
	want := copyTraces(got)
	// the stored run's record 1 was evaluated at a step, with the metrics
	// only an evaluation gives
	want[0].Records[1].Objective, want[0].Records[1].Gap = solver.F(1.5), solver.F(0.5)
	want[0].Records[1].Extra = map[string]float64{"dual": 1}
	res := Compare(want, got)
	if !res.OK() || res.Forced != 1 || res.Records != 6 || !strings.Contains(Report(res), "1 records evaluated at a step of a paused run") {
		t.Fatalf("Compare = %+v (%s)", res, Report(res))
	}
	if v := Outcome(res); !strings.Contains(v.Detail, "at a step of a paused run") {
		t.Errorf("the outcome does not say it: %+v", v)
	}
	// another field of the forced record differs: a difference
	changed := copyTraces(want)
	changed[0].Records[1].Gamma = 0.3
	if res := Compare(changed, got); res.OK() || res.Diff.Field != "gamma" || res.Diff.Record != 1 {
		t.Fatalf("a forced record with another γ: %+v", res)
	}
	// the re-run evaluates where the stored run did not: a difference
	if res := Compare(got, want); res.OK() || res.Diff.Field != "objective" {
		t.Fatalf("an evaluation the stored run lacks: %+v", res)
	}
}

// A trace's status cannot make verify compare less: a finished trace (its
// summary says max_iters) marked cancelled in its bundle is a difference
// in its status, not a prefix to compare; marked as its summary says, it
// is compared whole.
func TestTraceStatusIsCompared(t *testing.T) {
	got := sample()
	b := &bundle.Bundle{Status: "done"}
	for _, tr := range copyTraces(got) {
		b.Traces = append(b.Traces, bundle.Trace{Algo: tr.Algo, Replication: tr.Replication, Seed: tr.Seed, Status: tr.Summary.Status, Summary: tr.Summary, Records: tr.Records})
	}
	if res := Compare(FromBundle(b), got); !res.OK() || res.Partial != 0 || res.Records != 6 {
		t.Fatalf("statuses as the summaries say: %+v", res)
	}
	b.Traces[1].Status = "cancelled"
	b.Traces[1].Records = b.Traces[1].Records[:1]
	res := Compare(FromBundle(b), got)
	if res.OK() || res.Diff.Field != "status" || res.Diff.Trace != 1 || res.Partial != 0 {
		t.Fatalf("a finished trace marked cancelled: %+v (%s)", res, Report(res))
	}
}
