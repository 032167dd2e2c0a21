package bundle

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkDecode reads a bundle of 4 traces × 25 000 records, against
// encoding/json decoding the same records into []solver.Record (finite
// numbers, no checks) in the same loop: the cost of the strict,
// path-naming decoder. (ns/op counts both.)
func BenchmarkDecode(b *testing.B) {
	bd := testBundle(rand.New(rand.NewPCG(1, 2)), 25_000)
	for i := range bd.Traces {
		for j := range bd.Traces[i].Records {
			r := &bd.Traces[i].Records[j]
			r.Passes, r.Time, r.Gamma, r.Extra = float64(j)*0.01, float64(j)*1e-5, 1/float64(j+1), nil
			for _, p := range []*float64{r.Objective, r.Gap, r.GradErr} {
				if p != nil {
					*p = 1 / float64(j+1)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := Encode(&buf, bd); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var plain [][]byte
	for _, t := range bd.Traces {
		p, err := json.Marshal(t.Records)
		if err != nil {
			b.Fatal(err)
		}
		plain = append(plain, p)
	}
	// the baseline and the decoder alternate, so that both see the same
	// load of the machine
	var baseNs, ns time.Duration
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		for _, p := range plain {
			var recs []solver.Record
			if err := json.Unmarshal(p, &recs); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if _, err := Decode(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		baseNs += t1.Sub(t0)
		ns += time.Since(t1)
	}
	b.StopTimer()
	b.ReportMetric(float64(ns)/float64(baseNs), "x-json-unmarshal")
	b.ReportMetric(float64(ns.Nanoseconds())/float64(b.N*4*25_000), "ns/record")
}
