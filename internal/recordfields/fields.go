// Package recordfields declares the fields of a run's record (solver.Record)
// once: their JSON and CSV names, kinds, whether they measure wall-clock
// time and whether they are set only on evaluated iterations. The store's
// codec, the JSON and CSV encoders of the server and of `dashboard solve`,
// the bundle's encoder, decoder and digest, `verify`'s comparison and the
// store's conformance suite all read the table below, and `go generate`
// writes fw.Record's JSON encoder and fw/live's queued record from it, so
// that a new field is one line here plus its producer (docs/compatibility.md
// says how the formats stay readable when one is added).
package recordfields

//go:generate go run ./gen ../..
//go:generate go run -tags recordfields_extra ./gen ../..

// declared is the record's fields, in the order of its JSON. A field added
// later gets the next Since (the record codec's version that carries it)
// and goes at the end.
var declared = []Field{
	{Go: "K", JSON: "k", Kind: Int, Index: true, Required: true},
	{Go: "Passes", JSON: "passes", Kind: Float, Required: true},
	{Go: "Time", JSON: "time_s", Kind: Float, Required: true, WallClock: true},
	{Go: "Step", JSON: "step", Kind: String, Required: true},
	{Go: "Gamma", JSON: "gamma", Kind: Float, Required: true},
	{Go: "Batch", JSON: "batch", Kind: Int, Required: true},
	{Go: "Active", JSON: "active", Kind: Int, Required: true},
	{Go: "FWSteps", JSON: "fw_steps", Kind: Int, Omit: true},
	{Go: "AwaySteps", JSON: "away_steps", Kind: Int, Omit: true},
	{Go: "Drops", JSON: "drops", Kind: Int, Omit: true},
	{Go: "Cleanups", JSON: "cleanups", Kind: Int, Omit: true},
	{Go: "Objective", JSON: "objective", Kind: OptFloat, Evaluated: true},
	{Go: "Gap", JSON: "gap", Kind: OptFloat, Evaluated: true},
	{Go: "GradErr", JSON: "grad_err", Kind: OptFloat, Omit: true, Evaluated: true},
	{Go: "Extra", JSON: "extra", Kind: Metrics, Omit: true, Evaluated: true},
}
