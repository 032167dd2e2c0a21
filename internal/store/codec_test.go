package store

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// randFloat draws from a mix that includes the values JSON cannot carry.
func randFloat(rng *rand.Rand) float64 {
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

func randInt(rng *rand.Rand) int {
	switch rng.IntN(5) {
	case 0:
		return 0
	case 1:
		return int(rng.Int64()) // any int, negative ones too
	}
	return rng.IntN(1000)
}

var steps = []string{solver.StepFW, solver.StepAway, solver.StepDrop, solver.StepCollapse, solver.StepBlock, solver.StepNone, "", "ünïcode"}

// randRecords returns n records with increasing k (with gaps).
func randRecords(rng *rand.Rand, n int) []solver.Record {
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
				for j := rng.IntN(5); j > 0; j-- {
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

// recordDiff describes how two records differ bit for bit ("" if they do
// not); an empty Extra equals a nil one.
func recordDiff(a, b *solver.Record) string {
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

func checkRecords(t testing.TB, got, want []solver.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if d := recordDiff(&got[i], &want[i]); d != "" {
			t.Fatalf("record %d: %s", i, d)
		}
	}
}

func TestCodecRoundTripIsBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 17, 500} {
		for trial := 0; trial < 20; trial++ {
			recs := randRecords(rng, n)
			blob := encodeBatch(nil, recs)
			got, err := decodeBatch(nil, blob)
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			checkRecords(t, got, recs)
		}
	}
}

func TestCodecRefusesCorruptBlobs(t *testing.T) {
	recs := randRecords(rand.New(rand.NewPCG(3, 4)), 20)
	blob := encodeBatch(nil, recs)
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"other version", append([]byte{9}, blob[1:]...)},
		{"truncated", blob[:len(blob)-3]},
		{"trailing", append(append([]byte(nil), blob...), 0)},
		{"huge count", []byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}},
	} {
		if _, err := decodeBatch(nil, c.b); err == nil {
			t.Errorf("%s: decoded without error", c.name)
		}
	}
	// every strict prefix fails
	for i := 0; i < len(blob); i++ {
		if _, err := decodeBatch(nil, blob[:i]); err == nil {
			t.Fatalf("prefix of %d bytes (of %d) decoded", i, len(blob))
		}
	}
}

func FuzzDecodeBatch(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 10} {
		f.Add(encodeBatch(nil, randRecords(rng, n)))
	}
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := decodeBatch(nil, b)
		if err != nil {
			return
		}
		// what decodes re-encodes to a blob that decodes to the same
		again, err := decodeBatch(nil, encodeBatch(nil, recs))
		if err != nil {
			t.Fatalf("re-encoded batch: %v", err)
		}
		checkRecords(t, again, recs)
	})
}
