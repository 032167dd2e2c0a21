package bundle

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/fwlab/fwlab/internal/solver"
)

// ParseRecord reads one record object, its fields as a bundle holds them
// (solver.Record's JSON), by the rules of a bundle's records: the required
// fields, no unknown field and none twice, integers where counts are,
// numbers (or "NaN", "Inf", "-Inf") where values are, a step kind of 1 to
// 64 characters, extra keys of 1 to 256. A failure is an *Error naming path
// and the field. It is how records sent to a run opened from outside are
// read (docs/live.md), with the scanner that reads a bundle's records.
func ParseRecord(path string, raw map[string]json.RawMessage) (solver.Record, error) {
	var r solver.Record
	obj, err := json.Marshal(raw)
	if err != nil {
		return r, errorf(path, "must be an object of a record's fields: %v", err)
	}
	// a NUL byte after the object: the scanner sees no more than it holds
	s := &scanner{r: bytes.NewReader(append(obj, 0)), line: 1}
	if _, ok := s.skipSpace(); !ok {
		return r, errorf(path, "must be an object of a record's fields")
	}
	err = s.record(&r)
	var re *recordError
	if err == nil || !errors.As(err, &re) {
		if err != nil {
			return r, errorf(path, "%v", err)
		}
		return r, nil
	}
	var fe *Error
	var se *syntaxError
	switch {
	case errors.As(re.err, &fe):
		return r, &Error{Path: path + re.field, Msg: fe.Msg, Err: fe.Err}
	case errors.As(re.err, &se):
		return r, errorf(path+re.field, "invalid JSON: %s", se.msg)
	}
	return r, errorf(path+re.field, "%v", re.err)
}
