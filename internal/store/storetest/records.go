package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// randFloat draws from a mix that includes what JSON cannot carry (NaN with
// and without a payload, infinities, negative zero) and any bit pattern.
func randFloat(rng *rand.Rand) float64 {
	switch rng.IntN(12) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Float64frombits(0x7ff8_0000_dead_beef)
	case 4:
		return 0
	case 5:
		return math.Copysign(0, -1)
	case 6:
		return math.SmallestNonzeroFloat64
	case 7:
		return math.Float64frombits(rng.Uint64())
	}
	return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
}

func randInt(rng *rand.Rand) int {
	switch rng.IntN(5) {
	case 0:
		return 0
	case 1:
		return int(rng.Int64())
	}
	return rng.IntN(1000)
}

var steps = []string{solver.StepFW, solver.StepAway, solver.StepDrop, solver.StepCollapse, solver.StepBlock, solver.StepNone, "", "ünïcode"}

// RandRecords returns n records with increasing k, every field exercised.
func RandRecords(rng *rand.Rand, n int) []solver.Record {
	out := make([]solver.Record, n)
	k := rng.IntN(10)
	for i := range out {
		r := &out[i]
		r.K = k
		k += 1 + rng.IntN(3)/2*rng.IntN(100)
		r.Passes, r.Time, r.Gamma = randFloat(rng), randFloat(rng), randFloat(rng)
		r.Step = steps[rng.IntN(len(steps))]
		r.Batch, r.Active = randInt(rng), randInt(rng)
		if rng.IntN(2) == 0 {
			r.FWSteps, r.AwaySteps, r.Drops, r.Cleanups = randInt(rng), randInt(rng), randInt(rng), randInt(rng)
		}
		if rng.IntN(3) == 0 {
			r.Objective, r.Gap = solver.F(randFloat(rng)), solver.F(randFloat(rng))
			if rng.IntN(2) == 0 {
				r.GradErr = solver.F(randFloat(rng))
			}
			if rng.IntN(2) == 0 {
				r.Extra = map[string]float64{}
				for j := 1 + rng.IntN(4); j > 0; j-- {
					r.Extra[fmt.Sprintf("m%d", rng.IntN(8))] = randFloat(rng)
				}
			}
		}
	}
	return out
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func sameOpt(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return sameFloat(*a, *b)
}

// RecordDiff says how two records differ bit for bit ("" if they do not).
func RecordDiff(a, b *solver.Record) string {
	switch {
	case a.K != b.K:
		return fmt.Sprintf("k %d vs %d", a.K, b.K)
	case !sameFloat(a.Passes, b.Passes), !sameFloat(a.Time, b.Time), !sameFloat(a.Gamma, b.Gamma):
		return fmt.Sprintf("passes/time/gamma %v %v %v vs %v %v %v", a.Passes, a.Time, a.Gamma, b.Passes, b.Time, b.Gamma)
	case a.Step != b.Step:
		return fmt.Sprintf("step %q vs %q", a.Step, b.Step)
	case a.Batch != b.Batch || a.Active != b.Active || a.FWSteps != b.FWSteps || a.AwaySteps != b.AwaySteps || a.Drops != b.Drops || a.Cleanups != b.Cleanups:
		return "counts differ"
	case !sameOpt(a.Objective, b.Objective) || !sameOpt(a.Gap, b.Gap) || !sameOpt(a.GradErr, b.GradErr):
		return "objective/gap/grad_err differ"
	case len(a.Extra) != len(b.Extra):
		return fmt.Sprintf("extra %v vs %v", a.Extra, b.Extra)
	}
	for k, v := range a.Extra {
		w, ok := b.Extra[k]
		if !ok || !sameFloat(v, w) {
			return fmt.Sprintf("extra[%q] %v vs %v", k, v, w)
		}
	}
	return ""
}

// CheckRecords fails the test unless got and want are the same records,
// bit for bit.
func CheckRecords(tb testing.TB, got, want []solver.Record) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if d := RecordDiff(&got[i], &want[i]); d != "" {
			tb.Fatalf("record %d: %s", i, d)
		}
	}
}
