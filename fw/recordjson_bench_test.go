package fw

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRecordAppendJSON encodes records of a long trace as a user's
// json.Marshal does (Record.MarshalJSON): one in ten evaluated, with two
// metrics, the others with their counts. ns/op is per record.
func BenchmarkRecordAppendJSON(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]Record, 1024)
	for i := range recs {
		r := &recs[i]
		*r = Record{K: i, Passes: float64(i) * 0.013, Time: float64(i) * 1.7e-5, Step: StepAway, Gamma: rng.Float64(), Batch: 128, Active: 5 + rng.IntN(40),
			AwaySteps: 1}
		if i%10 == 0 {
			r.Objective, r.Gap, r.GradErr = F(rng.Float64()), F(rng.Float64()*1e-3), F(rng.Float64()*1e-7)
			r.Extra = map[string]float64{"nnz": float64(r.Active), "t_slack": rng.Float64()}
		}
	}
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = recs[i%len(recs)].AppendJSON(buf[:0])
	}
}
