package figures

import (
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

func srcOf(recs []solver.Record) TraceSource {
	return TraceSource{Len: len(recs), Each: func(from, to int, fn func(*solver.Record) bool) {
		for i := from; i < to && i < len(recs); i++ {
			r := recs[i]
			if !fn(&r) {
				return
			}
		}
	}}
}

// The streamed figure keeps, per column, each trace's extremes: a spike
// within a column survives decimation as the band's top, the line is the
// median of the replications' last values (checked against a brute-force
// computation), and a column past a trace's end takes its final value.
func TestFromRunStreamKeepsSpikesAndMedians(t *testing.T) {
	mk := func(n int, scale float64, spike int) []solver.Record {
		out := make([]solver.Record, n)
		for k := range out {
			f := scale * (1 + 1/float64(k+1))
			if k == spike {
				f = 1e6
			}
			g := f / 2
			out[k] = solver.Record{K: k, Passes: float64(k) / 10, Objective: &f, Gap: &g}
		}
		return out
	}
	a := mk(10_000, 1, 4321)
	b := mk(10_000, 2, -1)
	c := mk(5_000, 3, -1) // ends early: keeps its final value
	fig := FromRunStream("t", []StreamTraces{{Algo: "fw", Traces: []TraceSource{srcOf(a), srcOf(b), srcOf(c)}}}, math.NaN(), 100)
	s := fig.Panels[0].Lines.Series[0]
	if len(s.X) != 100 {
		t.Fatalf("%d columns", len(s.X))
	}
	// the column holding iteration 4321 (of 0 … 9999 over 100 columns)
	col := 43 // 4321 / 9999 · 100
	// without F*, F − the best F reached (trace a's last, 1 + 1/10000)
	best := 1 + 1/10000.0
	if math.Abs(s.Hi[col]-(1e6-best)) > 1e-6*1e6 {
		t.Errorf("the spike is lost: the band's top there is %g", s.Hi[col])
	}
	// brute force: the last record of each trace in column 80, the median
	last := func(recs []solver.Record, c int) float64 {
		v := math.NaN()
		for _, r := range recs {
			if int(float64(r.K)/9999*100) <= c || (c == 99 && r.K == 9999) {
				v = *r.Objective
			}
		}
		return v
	}
	want := []float64{last(a, 80) - best, last(b, 80) - best, last(c, 80) - best}
	// sorted: a < b < c by scale
	if got := s.Y[80]; math.Abs(got-want[1]) > 1e-9*want[1] {
		t.Errorf("column 80: median %g, want %g (of %v)", got, want[1], want)
	}
	if s.Lo[80] > want[0]*(1+1e-9) {
		t.Errorf("column 80: band from %g, want at most %g", s.Lo[80], want[0])
	}
}

// A record whose F − F* is not positive (the optimum reached at rounding
// level) has no point on a log axis: the line stops there rather than
// carrying the last positive value on as if the run had stalled at it.
func TestFromRunStreamStopsAtNoValue(t *testing.T) {
	recs := make([]solver.Record, 100)
	for k := range recs {
		f := 1.0 + math.Pow(10, -float64(k))
		if k >= 10 {
			f = 1 // F = F*
		}
		recs[k] = solver.Record{K: k, Passes: float64(k), Objective: &f}
	}
	fig := FromRunStream("t", []StreamTraces{{Algo: "afw", Traces: []TraceSource{srcOf(recs)}}}, 1, 100)
	s := fig.Panels[0].Lines.Series[0]
	if !(s.Y[5] > 0) || !math.IsNaN(s.Y[50]) || !math.IsNaN(s.Y[99]) {
		t.Errorf("F − F* at 5, 50, 99: %v %v %v; want a value, then none", s.Y[5], s.Y[50], s.Y[99])
	}
}
