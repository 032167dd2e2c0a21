package store

import (
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkCodec encodes and decodes a real LASSO trace (evaluated every
// record, LASSO's two extra metrics) in batches of 64: the record path's
// share in the codec, per record.
func BenchmarkCodec(b *testing.B) {
	recs := solverRecords(b, "lasso", "ssfw-as", 2000, 1)
	var buf []byte
	b.Run("encode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for lo := 0; lo < len(recs); lo += 64 {
				buf = encodeBatch(buf[:0], recs[lo:min(lo+64, len(recs))])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
	})
	var blobs [][]byte
	for lo := 0; lo < len(recs); lo += 64 {
		blobs = append(blobs, encodeBatch(nil, recs[lo:min(lo+64, len(recs))]))
	}
	b.Run("decode", func(b *testing.B) {
		var out []solver.Record
		for i := 0; i < b.N; i++ {
			for _, blob := range blobs {
				var err error
				if out, err = decodeBatch(out[:0], blob); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
	})
}
