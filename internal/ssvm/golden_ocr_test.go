package ssvm

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// ocrFingerprint is the bit pattern of a run on OCR, hashed: the step kind
// and γ of every iteration, and the final w, w̄, ℓ and ℓ̄.
type ocrFingerprint struct {
	Iters int    `json:"iters"`
	Steps string `json:"steps"`
	W     string `json:"w"`
	WAvg  string `json:"w_avg"`
	Ell   string `json:"ell"`
}

func hashFloats(xs ...[]float64) string {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range xs {
		for _, v := range x {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestGoldenOCR pins the exact trajectory of bcfw and bcfw-as (with feature
// sampling) on the OCR training set over 1.5 passes, which includes the
// once-per-pass recomputation of w: every speed-up of the block step must
// keep it bit for bit (go test ./internal/ssvm -run GoldenOCR -update
// rewrites it).
func TestGoldenOCR(t *testing.T) {
	if testing.Short() {
		t.Skip("1.5 passes over OCR per algorithm")
	}
	p := ocrProblem(t, 0.01)
	n := p.N()
	iters := n + n/2
	got := map[string]ocrFingerprint{}
	for _, algo := range []string{AlgoBCFW, AlgoBCFWAS} {
		m, err := p.NewMethod(Options{Algo: algo, Average: true, Limits: defaultLimits(n), Seed: 3,
			Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		var b [8]byte
		for k := 0; k < iters; k++ {
			info := m.iterate()
			h.Write([]byte(info.kind))
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(info.gamma))
			h.Write(b[:])
		}
		got[algo] = ocrFingerprint{Iters: iters, Steps: fmt.Sprintf("%016x", h.Sum64()),
			W: hashFloats(m.weights()), WAvg: hashFloats(m.avgWeights()), Ell: hashFloats([]float64{m.ell, m.lavg})}
	}
	path := filepath.Join("testdata", "golden_ocr.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want map[string]ocrFingerprint
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for algo, w := range want {
		if got[algo] != w {
			t.Errorf("%s: trajectory differs from the golden one:\n got  %+v\n want %+v", algo, got[algo], w)
		}
	}
}
