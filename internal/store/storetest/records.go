package storetest

import (
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// RandRecords returns n records with increasing k, every declared field
// exercised (internal/recordfields: a field added to the declaration is
// drawn here with no other edit).
func RandRecords(rng *rand.Rand, n int) []solver.Record {
	return recordfields.RandRecords(rng, n, false)
}

// RecordDiff says how two records differ bit for bit ("" if they do not),
// field by declared field.
func RecordDiff(a, b *solver.Record) string { return recordfields.Diff(a, b) }

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
