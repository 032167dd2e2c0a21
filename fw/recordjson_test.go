package fw

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// referenceJSON is the record's JSON as encoding/json writes it by
// reflection, with non-finite values as null (or left out of Extra): the
// independent reference AppendJSON must equal byte for byte.
func referenceJSON(t *testing.T, r Record) []byte {
	type plain Record
	c := plain(r)
	c.Objective, c.Gap, c.GradErr = finitePtr(c.Objective), finitePtr(c.Gap), finitePtr(c.GradErr)
	c.Gamma, c.Passes, c.Time = finiteOr0(c.Gamma), finiteOr0(c.Passes), finiteOr0(c.Time)
	if c.Extra != nil {
		e := map[string]float64{}
		for k, v := range c.Extra {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				e[k] = v
			}
		}
		c.Extra = e
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordAppendJSON: the hand-written encoder gives encoding/json's bytes
// on records with every kind of value: tiny, huge, negative zero, integral,
// non-finite, absent and odd metric names.
func TestRecordAppendJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1e-300, 5e-324, 1e20, 1e21, 1.5e21, -2.5e-9, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 1.0 / 3}
	pick := func() float64 {
		if rng.IntN(3) == 0 {
			return vals[rng.IntN(len(vals))]
		}
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(2046)+1)<<52)
	}
	ptr := func() *float64 {
		if rng.IntN(4) == 0 {
			return nil
		}
		return F(pick())
	}
	keys := []string{"nnz", "t_slack", "x0", "at_x1", "train_acc", "a<b>&c", "é", "q\"uote", "tab\t", ""}
	steps := []string{StepFW, StepAway, StepDrop, StepCollapse, StepPairwise, StepProx, StepBlock, StepNone, "sweep", "full-sweep", "<odd>"}
	for i := 0; i < 20000; i++ {
		r := Record{K: rng.IntN(1 << 20), Passes: pick(), Time: pick(), Step: steps[rng.IntN(len(steps))], Gamma: pick(),
			Batch: rng.IntN(1000) - 1, Active: rng.IntN(100), Objective: ptr(), Gap: ptr(), GradErr: ptr()}
		if rng.IntN(2) == 0 {
			r.FWSteps, r.AwaySteps, r.Drops, r.Cleanups = rng.IntN(3), rng.IntN(3), rng.IntN(3), rng.IntN(3)
		}
		if rng.IntN(3) == 0 {
			r.Extra = map[string]float64{}
			for n := rng.IntN(5); n > 0; n-- {
				r.Extra[keys[rng.IntN(len(keys))]] = pick()
			}
		}
		got, want := r.AppendJSON(nil), referenceJSON(t, r)
		if !bytes.Equal(got, want) {
			t.Fatalf("record %+v:\n got %s\nwant %s", r, got, want)
		}
		if m, err := json.Marshal(r); err != nil || !bytes.Equal(m, want) {
			t.Fatalf("json.Marshal: %s, %v\nwant %s", m, err, want)
		}
	}
}

// TestAppendJSONStringIsEncodingJSON: every byte alone and beside a plain
// letter, every pair of ASCII bytes, and random strings of bytes (valid and
// invalid UTF-8) come out as json.Marshal writes them.
func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	var in []string
	for c := 0; c < 256; c++ {
		in = append(in, string([]byte{byte(c)}), "w:"+string([]byte{byte(c)})+"x")
		for d := 0; d < 128; d++ {
			in = append(in, string([]byte{byte(c % 128), byte(d)}))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(4) > 0 {
				b[i] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		in = append(in, string(b))
	}
	in = append(in, "", "w:v12", "fw_x0", "a b+c.d-e_f", "caf\u00e9", "\u2028", "x\u2029y")
	for _, s := range in {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString([]byte("["), s); !bytes.Equal(got[1:], want) || got[0] != '[' {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
	}
}
