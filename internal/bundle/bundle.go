// Package bundle defines fwlab's one exchange format for a run: its spec,
// the fwlab version that made it, the instance summary, every trace with all
// its records, summaries and panels. `solve -format json` writes a bundle,
// `dashboard import` and the server read one into the run store, and a
// stored run exports as one, so runs move between machines (say, the
// `solve` jobs of a cluster array) and compare like any other.
//
// A bundle is one JSON object, written with one record per line:
//
//	{"format":"fwlab-bundle","format_version":1,"version":"…","status":"done",
//	 "created":"2026-01-02T03:04:05Z","name":"","note":"",
//	 "spec":{…the run spec, as POST /api/runs takes it…},
//	 "info":{"dim":50,"samples":200,"blocks":1,"fstar":1.5,"panels":{…}},
//	 "traces":[
//	 {"algo":"ssfw-as","replication":0,"seed":1,"status":"converged",
//	  "summary":{"objective":…,"gap":…,"iters":…,"passes":…,"time_s":…,"status":"converged","message":""},
//	  "panels":{…},"records":[
//	 {"k":0,"passes":0,"time_s":0,"step":"none","gamma":0,"batch":0,"active":1,"objective":7.42,"gap":14.3},
//	 …]}],
//	 "aggregates":[…],
//	 "digest":"sha256:…"}
//
// "digest" (format version 2 on) is the SHA-256 of a canonical binary
// encoding of the traces (see Digest), written last since Encode computes
// it as the records stream out; CheckDigest compares it with the traces
// read. Decode keeps it in Bundle.Digest without checking it, so that a
// bundle whose records were changed can still be read and looked at.
//
// Records have the fields and names of solver.Record's JSON. Numbers are
// written in the shortest form that reads back to the same float64; a
// non-finite number (a diverging method's γ or objective) is the string
// "NaN", "Inf" or "-Inf", so every value survives (only a NaN's payload bits
// do not). "aggregates" (the per-iteration median, min and max over
// replications that solve adds) is derived data: it is checked to be JSON,
// kept by Decode, and not stored.
//
// Fields may come in any order (a bundle rewritten with sorted keys still
// reads). Decode is strict: an unknown field, a missing required one, a value of
// the wrong type, a record's field given twice, records whose k does not
// increase, or a document that ends early are refused with an error naming
// the path of the field where reading stopped (for example
// traces[0].records[12].gap) and, in the records, its line.
package bundle

import (
	"encoding/json"
	"github.com/fwlab/fwlab/internal/recordfields"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Format is the value of a bundle's "format" field.
const Format = "fwlab-bundle"

// FormatVersion is the format version this code writes; Decode reads every
// version up to it and refuses a newer one, naming both.
// Version 2 added "digest"; each record field added to the declaration
// (internal/recordfields, a higher record codec version) adds one more
// (docs/compatibility.md).
var FormatVersion = int64(1 + recordfields.Version)

// Bundle is one run.
type Bundle struct {
	Version    string    // the fwlab version that made the run
	Status     string    // the run's status (store.Statuses); "" reads as done
	Created    time.Time // zero: not recorded
	Ended      time.Time // zero: not recorded
	Name, Note string
	Spec       spec.Run
	Info       Info
	Traces     []Trace
	Aggregates json.RawMessage // solve's aggregates over replications, or nil
	// Digest is the digest the bundle carried when decoded ("" for one
	// written before format version 2); Encode ignores it and writes the
	// digest of the traces it writes.
	Digest string
}

// Info summarises the problem instance (the JSON of scenarios.Info).
type Info struct {
	Dim     int             `json:"dim"`
	Samples int             `json:"samples"`
	Blocks  int             `json:"blocks"`
	FStar   *float64        `json:"fstar,omitempty"`
	Panels  json.RawMessage `json:"panels,omitempty"`
}

// Trace is one (algorithm, replication) of the run.
type Trace struct {
	Algo        string
	Replication int
	Seed        int64
	Status      string // "" reads as the summary's status
	Summary     *solver.Summary
	Panels      json.RawMessage // the final estimate's panels (a JSON object), or nil
	PanelsError string
	Records     []solver.Record
}
