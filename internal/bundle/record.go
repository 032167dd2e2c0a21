package bundle

import (
	"encoding/json"

	"github.com/fwlab/fwlab/internal/solver"
)

// ParseRecord reads one record object, its fields as a bundle holds them
// (solver.Record's JSON), by the rules of a bundle's records: the required
// fields, no unknown field, integers where counts are, numbers (or "NaN",
// "Inf", "-Inf") where values are, a step kind of 1 to 64 characters, extra
// keys of 1 to 256. A failure is an *Error naming path and the field. It is
// how records sent to a run opened from outside are read (docs/live.md).
func ParseRecord(path string, raw map[string]json.RawMessage) (solver.Record, error) {
	return record(path, raw)
}
