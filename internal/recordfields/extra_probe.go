//go:build recordfields_extra

package recordfields

import "github.com/fwlab/fwlab/internal/solver"

// A test build (-tags recordfields_extra) adds one field, as a developer
// adding a field would: one line of declaration and its producer. The
// tests built with the tag check that every encoding carries it with no
// other edit.
var buildExtra = []Field{
	{JSON: "probe", Kind: OptFloat, Omit: true, Evaluated: true, Since: 2, Produce: probe},
}

// probe is a deterministic function of the record (so that a re-run
// reproduces it): on evaluated records, k + passes/2.
func probe(r *solver.Record) {
	if r.Objective != nil {
		probeField.SetOpt(r, float64(r.K)+r.Passes/2)
	}
}

// probeField is the test build's added field.
var probeField *Field

func init() { probeField = ByJSON("probe") }
