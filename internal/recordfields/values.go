package recordfields

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fwlab/fwlab/internal/solver"
)

// RandFloat draws from a mix that includes the values JSON cannot carry.
func RandFloat(rng *rand.Rand) float64 {
	switch rng.IntN(12) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Float64frombits(0x7ff8_0000_dead_beef) // a NaN with a payload
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

// RandInt draws 0, any int (negative ones too) or a small count.
func RandInt(rng *rand.Rand) int {
	switch rng.IntN(5) {
	case 0:
		return 0
	case 1:
		return int(rng.Int64())
	}
	return rng.IntN(1000)
}

var randSteps = []string{solver.StepFW, solver.StepAway, solver.StepDrop, solver.StepCollapse, solver.StepBlock, solver.StepNone, "", "ünïcode"}

// RandRecords returns n records with increasing k (with gaps), every
// declared field exercised: about a third of the records are evaluated
// (their Evaluated fields set, each optional one half of the time), half
// carry their optional counts. With emptyExtra, some carry an empty,
// non-nil metrics map.
func RandRecords(rng *rand.Rand, n int, emptyExtra bool) []solver.Record {
	out := make([]solver.Record, n)
	k := rng.IntN(10)
	for i := range out {
		r := &out[i]
		counts, evaluated := rng.IntN(2) == 0, rng.IntN(3) == 0
		for j := range Fields {
			f := &Fields[j]
			if f.Evaluated && !evaluated || f.Omit && f.Kind == Int && !counts {
				continue
			}
			switch f.Kind {
			case Int:
				if f.Index {
					f.SetInt(r, k)
					k += 1 + rng.IntN(3)/2*rng.IntN(100)
				} else {
					f.SetInt(r, RandInt(rng))
				}
			case Float:
				f.SetFloat(r, RandFloat(rng))
			case String:
				f.SetStr(r, randSteps[rng.IntN(len(randSteps))])
			case OptFloat:
				if !f.Omit || rng.IntN(2) == 0 {
					f.SetOpt(r, RandFloat(rng))
				}
			case Metrics:
				if rng.IntN(2) != 0 {
					continue
				}
				m := 1 + rng.IntN(4)
				if emptyExtra {
					m = rng.IntN(5)
				}
				if r.Extra == nil {
					r.Extra = map[string]float64{}
				}
				for ; m > 0; m-- {
					r.Extra[fmt.Sprintf("m%d", rng.IntN(8))] = RandFloat(rng)
				}
			}
		}
	}
	return out
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// Diff says how two records differ bit for bit, naming the first field
// that differs ("" if none does); an empty metrics map equals a nil one.
func Diff(a, b *solver.Record) string {
	for i := range Fields {
		f := &Fields[i]
		switch f.Kind {
		case Int:
			if x, y := f.Int(a), f.Int(b); x != y {
				return fmt.Sprintf("%s %d vs %d", f.JSON, x, y)
			}
		case Float:
			if x, y := f.Float(a), f.Float(b); !sameFloat(x, y) {
				return fmt.Sprintf("%s %v vs %v", f.JSON, x, y)
			}
		case String:
			if x, y := f.Str(a), f.Str(b); x != y {
				return fmt.Sprintf("%s %q vs %q", f.JSON, x, y)
			}
		case OptFloat:
			x, okx := f.Opt(a)
			y, oky := f.Opt(b)
			if okx != oky || !sameFloat(x, y) {
				return fmt.Sprintf("%s %s vs %s", f.JSON, optString(x, okx), optString(y, oky))
			}
		case Metrics:
			if MetricCount(a) != MetricCount(b) {
				return fmt.Sprintf("%s %v vs %v", f.JSON, a.Extra, b.Extra)
			}
			for k, v := range a.Extra {
				if IsSlot(k) {
					continue
				}
				w, ok := b.Extra[k]
				if !ok || !sameFloat(v, w) {
					return fmt.Sprintf("%s[%q] %v vs %v", f.JSON, k, v, w)
				}
			}
		}
	}
	return ""
}

func optString(v float64, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprint(v)
}
