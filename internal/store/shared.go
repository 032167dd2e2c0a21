package store

import (
	"encoding/json"

	"github.com/fwlab/fwlab/internal/solver"
)

// What another Backend needs to keep exactly what this one keeps: the
// record codec, the summaries' JSON and the rules on what a user writes.

// ErrExists is returned (wrapped) by PutRun and PutSweep for an id the
// store already holds.
var ErrExists = errExists

// EncodeBatch appends the compact encoding of recs (see codec.go) to b.
func EncodeBatch(b []byte, recs []solver.Record) []byte { return encodeBatch(b, recs) }

// DecodeBatch appends the records of one encoded batch to out.
func DecodeBatch(out []solver.Record, blob []byte) ([]solver.Record, error) {
	return decodeBatch(out, blob)
}

// MarshalSummary encodes a trace's summary as the store keeps it (its
// floats exact, NaN and infinities included).
func MarshalSummary(s *solver.Summary) ([]byte, error) { return marshalSummary(s) }

// UnmarshalSummary decodes what MarshalSummary wrote.
func UnmarshalSummary(b []byte) (*solver.Summary, error) { return unmarshalSummary(b) }

// KnownStatus reports whether s is one of Statuses.
func KnownStatus(s string) bool { return knownStatus(s) }

// CheckText checks a user's text: valid UTF-8 and at most max characters
// (the error names field).
func CheckText(field, s string, max int) error { return checkText(field, s, max) }

// CheckInstance checks an instance summary as the stores do: F* finite or
// absent, panels valid JSON (the error names the field).
func CheckInstance(in Instance) error { return checkInstance(in) }

// CheckJSON checks that m is nil or valid JSON (the error names field).
func CheckJSON(field string, m json.RawMessage) error { return checkJSON(field, m) }

// LikeEscape escapes LIKE's wildcards (% and _) and the escape character
// itself with a backslash, for a LIKE … ESCAPE '\' pattern.
func LikeEscape(s string) string { return likeEscape(s) }

// VariantSep joins an algorithm's name and what its variant changes in a
// trace's name ("afw + slack collapse": a variant that departs from the
// paper names itself, scenarios.TraceLabel). A Filter's Algorithm matches
// the algorithm's own traces and its variants'.
const VariantSep = " + "

// AlgorithmLike is the LIKE pattern (escaped with a backslash) of the
// names of algo's variants.
func AlgorithmLike(algo string) string { return likeEscape(algo+VariantSep) + "%" }
