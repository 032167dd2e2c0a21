package store

import (
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// randRecords returns n records with increasing k (with gaps), every
// declared field exercised, empty metrics maps among them.
func randRecords(rng *rand.Rand, n int) []solver.Record {
	return recordfields.RandRecords(rng, n, true)
}

func recordDiff(a, b *solver.Record) string { return recordfields.Diff(a, b) }

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
