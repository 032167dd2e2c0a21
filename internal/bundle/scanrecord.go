package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// recordFields are a record's fields in the order they are checked (and
// written); the first seven are required.
var recordFields = [...]string{"k", "passes", "time_s", "step", "gamma", "batch", "active", "fw_steps", "away_steps", "drops", "cleanups", "objective", "gap", "grad_err", "extra"}

const (
	fieldK = iota
	fieldPasses
	fieldTime
	fieldStep
	fieldGamma
	fieldBatch
	fieldActive
	fieldFWSteps
	fieldAwaySteps
	fieldDrops
	fieldCleanups
	fieldObjective
	fieldGap
	fieldGradErr
	fieldExtra
	numRecordFields
	requiredFields = fieldActive + 1
)

// recordField is the index of a record's field in recordFields, or -1.
func recordField(name []byte) int {
	switch string(name) {
	case "k":
		return fieldK
	case "passes":
		return fieldPasses
	case "time_s":
		return fieldTime
	case "step":
		return fieldStep
	case "gamma":
		return fieldGamma
	case "batch":
		return fieldBatch
	case "active":
		return fieldActive
	case "fw_steps":
		return fieldFWSteps
	case "away_steps":
		return fieldAwaySteps
	case "drops":
		return fieldDrops
	case "cleanups":
		return fieldCleanups
	case "objective":
		return fieldObjective
	case "gap":
		return fieldGap
	case "grad_err":
		return fieldGradErr
	case "extra":
		return fieldExtra
	}
	return -1
}

// laterFields are the record's fields declared after the scanner's own
// (internal/recordfields, a Since above 1), by JSON name: read by their
// declared kind (readLater), slower than the fields above but with no edit
// here when a field is added. TestScannerFollowsTheDeclaration checks that
// the fields above are the declaration's first ones, in its order.
var laterFields = func() map[string]*recordfields.Field {
	m := map[string]*recordfields.Field{}
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if recordField([]byte(f.JSON)) < 0 {
			m[f.JSON] = f
		}
	}
	return m
}()

// laterKV is a later-declared field met in a record, and its value.
type laterKV struct {
	f *recordfields.Field
	v span
}

type extraKV struct {
	key string
	v   span
}

// recordError is a failure reading a record: at (an index of the buffer)
// gives its line; field is the field's path below the record (".gap",
// ".extra.nnz"; "" for the record itself).
type recordError struct {
	at    int
	field string
	err   error // a *Error (its Path ignored), a *syntaxError or errShort
}

func (e *recordError) Error() string { return e.err.Error() }

func (s *scanner) fail(at int, field string, err error) error {
	return &recordError{at: at, field: field, err: err}
}

// record reads the next record into r: its value starts at buf[s.pos]
// (not white space). It reads more as needed, and refuses a record over
// MaxValueBytes.
func (s *scanner) record(r *solver.Record) error {
	end, err := s.shape()
	if err != nil {
		return err
	}
	if err := s.fields(r); err != nil {
		return err
	}
	if s.forms != nil {
		s.forms.endRecord(s.buf, span{s.pos, end}, s.canonical(), s.pending)
	}
	s.line += bytes.Count(s.buf[s.pos:end], []byte{'\n'})
	s.pos = end
	return nil
}

// shape is the first half of record: it checks the record at buf[s.pos]
// as JSON (reading more as needed, refusing one over MaxValueBytes) and
// its field names (checkNames), and returns the index after it, the
// fields noted for fields, the second half, to read. It leaves s.pos at
// the record.
func (s *scanner) shape() (int, error) {
	for {
		end, err := s.scanRecord()
		if err == errShort {
			if len(s.buf)-s.pos > MaxValueBytes {
				return 0, s.fail(s.pos, "", errorf("", "must be at most %s", sizeName(MaxValueBytes)))
			}
			if s.fill(s.pos) {
				continue
			}
		}
		if err != nil {
			return 0, err
		}
		return end, s.checkNames()
	}
}

// scanRecord checks the record at buf[s.pos] as JSON and notes where its
// fields are.
func (s *scanner) scanRecord() (int, error) {
	s.have, s.twice, s.others, s.later = 0, -1, s.others[:0], s.later[:0]
	s.loose, s.last, s.quick = false, -1, 0
	i := s.pos
	if s.buf[i] != '{' {
		if _, err := s.value(i, 0); err != nil {
			if err == errShort {
				return 0, err
			}
			return 0, s.fail(i, "", err)
		}
		got := "null"
		switch c := s.buf[i]; {
		case c == '[':
			got = "array"
		case c == '"':
			got = "string"
		case c == 't' || c == 'f':
			got = "bool"
		case c != 'n':
			got = "number"
		}
		return 0, s.fail(i, "", errorf("", "must be an object, got %s", got))
	}
	end, err := s.recordObject(i)
	if err != nil {
		if err == errShort {
			return 0, err
		}
		return 0, s.fail(i, "", err)
	}
	return end, nil
}

// recordObject is object for a record (at buf[i]), noting its fields, with
// the paths a record written by Encode takes made short: plain keys, no
// white space, numbers.
func (s *scanner) recordObject(i int) (int, error) {
	b := s.buf
	if i+1 >= len(b) || b[i+1] != '"' {
		s.loose = true
	}
	i = s.ws(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return 0, errShort
		}
		if b[i] != '"' {
			return 0, s.syntax(i, "looking for beginning of object key string")
		}
		j := i + 1
		for j < len(b) && plainByte[b[j]] {
			j++
		}
		kend, plain := j+1, true
		if j >= len(b) || b[j] != '"' {
			var err error
			if kend, plain, err = s.str(i); err != nil {
				return 0, err
			}
			s.loose = s.loose || !plain
		}
		key := b[i:kend]
		i = kend
		if i >= len(b) || b[i] != ':' {
			s.loose = true
			if i = s.ws(i); i >= len(b) {
				return 0, errShort
			}
			if b[i] != ':' {
				return 0, s.syntax(i, "after object key")
			}
		}
		if i++; i >= len(b) || isSpace(b[i]) {
			s.loose = true
			i = s.ws(i)
		}
		f := -1
		if plain {
			f = recordField(key[1 : len(key)-1])
		}
		var end int
		var err error
		switch {
		case i < len(b) && (b[i] == '-' || isDigit(b[i])):
			var ok bool
			if end, ok = s.quickFloat(i, f); !ok {
				end, err = s.number(i)
			}
		default:
			end, err = s.value(i, 1)
		}
		if err != nil {
			return 0, err
		}
		s.member(key, plain, f, span{i, end})
		if i = end; i >= len(b) || b[i] != ',' && b[i] != '}' {
			s.loose = true
			if i = s.ws(i); i >= len(b) {
				return 0, errShort
			}
		}
		switch b[i] {
		case '}':
			return i + 1, nil
		case ',':
			if i++; i >= len(b) || b[i] != '"' {
				s.loose = true
				i = s.ws(i)
			}
		default:
			return 0, s.syntax(i, "after object key:value pair")
		}
	}
}

// member notes a record's field (key: its bytes with the quotes; f: its
// index when plain).
func (s *scanner) member(key []byte, plain bool, f int, v span) {
	if !plain {
		if name := unquote(key, false); len(name) < 16 {
			f = recordField([]byte(name))
		}
	}
	if f < 0 {
		name := unquote(key, plain)
		if lf := laterFields[name]; lf != nil {
			s.later = append(s.later, laterKV{lf, v})
			return
		}
		s.others = append(s.others, name)
		return
	}
	if s.have&(1<<f) != 0 && s.twice < 0 {
		s.twice = f
	}
	if f <= s.last {
		s.loose = true // not in the declaration's order
	}
	s.have, s.last = s.have|1<<f, f
	s.spans[f] = v
}

// fields checks the fields noted by scanRecord (their names checked by
// shape) and sets r from them, with the rules (and in the order) of a
// record's fields.
func (s *scanner) fields(r *solver.Record) error {
	*r = solver.Record{}
	s.pending = s.pending[:0]
	s.enc = 0
	for f := 0; f < numRecordFields; f++ {
		if s.have&(1<<f) == 0 {
			continue
		}
		s.lastEnc = false
		sp := s.spans[f]
		v := s.buf[sp.lo:sp.hi]
		var err error
		nonNeg := func(dst *int) {
			n, ok := smallInt(v)
			if !ok {
				n, err = parseInt("", v)
			}
			s.lastEnc = ok && canonicalSmallInt(v) && (n != 0 || !omitField[f])
			if err == nil {
				if n < 0 {
					err = errorf("", "must be non-negative, got %d", n)
				}
				*dst = int(n)
			}
		}
		opt := func(dst **float64) {
			if string(v) == "null" {
				s.lastEnc = !omitField[f]
				return
			}
			var x float64
			if x, err = s.fieldFloat(f); err == nil {
				// one allocation for many records' numbers
				if len(s.floats) == cap(s.floats) {
					s.floats = make([]float64, 0, 3*chunkRecords)
				}
				s.floats = append(s.floats, x)
				*dst = &s.floats[len(s.floats)-1]
			}
		}
		switch f {
		case fieldK:
			nonNeg(&r.K)
		case fieldPasses:
			r.Passes, err = s.fieldFloat(f)
		case fieldTime:
			r.Time, err = s.fieldFloat(f)
		case fieldGamma:
			r.Gamma, err = s.fieldFloat(f)
		case fieldStep:
			r.Step, err = step(v)
			s.lastEnc = len(v) >= 2 && v[0] == '"' && encoderPlain(v[1:len(v)-1])
		case fieldBatch:
			nonNeg(&r.Batch)
		case fieldActive:
			nonNeg(&r.Active)
		case fieldFWSteps:
			nonNeg(&r.FWSteps)
		case fieldAwaySteps:
			nonNeg(&r.AwaySteps)
		case fieldDrops:
			nonNeg(&r.Drops)
		case fieldCleanups:
			nonNeg(&r.Cleanups)
		case fieldObjective:
			opt(&r.Objective)
		case fieldGap:
			opt(&r.Gap)
		case fieldGradErr:
			opt(&r.GradErr)
		case fieldExtra:
			r.Extra, err = s.extra(sp)
		}
		if s.lastEnc {
			s.enc |= 1 << f
		}
		if err != nil {
			var fe *recordError
			if errors.As(err, &fe) {
				return err
			}
			return s.fail(sp.lo, "."+recordFields[f], err)
		}
	}
	for _, l := range s.later {
		if err := readLater(l.f, s.buf[l.v.lo:l.v.hi], r); err != nil {
			return s.fail(l.v.lo, "."+l.f.JSON, err)
		}
	}
	return nil
}

// checkNames refuses a record whose field names are wrong: a field given
// twice, a required one missing, an unknown one.
func (s *scanner) checkNames() error {
	if s.twice >= 0 {
		return s.fail(s.spans[s.twice].lo, "."+recordFields[s.twice], errorf("", "appears twice"))
	}
	for f := 0; f < requiredFields; f++ {
		if s.have&(1<<f) == 0 {
			return s.fail(s.pos, "."+recordFields[f], errorf("", "is required"))
		}
	}
	if len(s.others) > 0 {
		return s.fail(s.pos, "."+slices.Min(s.others), errorf("", "unknown field"))
	}
	for i, l := range s.later {
		for _, m := range s.later[:i] {
			if m.f == l.f {
				return s.fail(l.v.lo, "."+l.f.JSON, errorf("", "appears twice"))
			}
		}
	}
	return nil
}

// readLater sets a field declared after the scanner's own from its value,
// by the field's declared kind.
func readLater(f *recordfields.Field, v []byte, r *solver.Record) error {
	switch f.Kind {
	case recordfields.Int:
		n, err := parseInt("", v)
		if err == nil {
			f.SetInt(r, int(n))
		}
		return err
	case recordfields.Float:
		x, err := number(v)
		if err == nil {
			f.SetFloat(r, x)
		}
		return err
	case recordfields.String:
		var str string
		if json.Unmarshal(v, &str) != nil {
			return errorf("", "must be a string, got %s", rawShort(v))
		}
		f.SetStr(r, str)
		return nil
	case recordfields.OptFloat:
		if string(v) == "null" {
			return nil
		}
		x, err := number(v)
		if err == nil {
			f.SetOpt(r, x)
		}
		return err
	}
	return errorf("", "a second metrics field is not supported")
}

// step reads a record's step: a string of 1 to 64 characters.
func step(v []byte) (string, error) {
	var st string
	ok := true
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0 && isASCII(v[1:len(v)-1]) {
		switch in := v[1 : len(v)-1]; string(in) {
		// the steps of the methods, without a string each
		case "fw":
			st = "fw"
		case "away":
			st = "away"
		case "drop":
			st = "drop"
		case "none":
			st = "none"
		case "pairwise":
			st = "pairwise"
		default:
			st = string(in)
		}
	} else if st, ok = jsonString(v); !ok {
		return "", errorf("", "must be a string, got %s", rawShort(v))
	}
	if st == "" || utf8.RuneCountInString(st) > 64 {
		return "", errorf("", "must be a step kind (fw, away, drop, …) of 1 to 64 characters")
	}
	return st, nil
}

// jsonString reads v as encoding/json reads a string (null leaves it "").
func jsonString(v []byte) (string, bool) {
	var s string
	err := json.Unmarshal(v, &s)
	return s, err == nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// extra reads a record's extra metrics: an object of numbers whose keys
// have 1 to 256 characters (nil when null or empty).
func (s *scanner) extra(sp span) (map[string]float64, error) {
	v := s.buf[sp.lo:sp.hi]
	if string(v) == "null" {
		return nil, nil
	}
	if v[0] != '{' {
		return nil, errorf("", "must be an object of numbers")
	}
	s.extras = s.extras[:0]
	s.lastEnc = s.forms != nil
	prev := sp.lo // where the member before ends: { or ,
	if _, err := s.object(sp.lo, 1, func(key []byte, plain bool, v span) {
		// the encoder's form: plain keys in increasing order, nothing
		// between the members but , and :
		if !plain || !encoderPlain(key[1:len(key)-1]) || v.lo != prev+len(key)+2 || recordfields.IsSlot(string(key[1:len(key)-1])) ||
			len(s.extras) > 0 && string(key[1:len(key)-1]) <= s.extras[len(s.extras)-1].key {
			s.lastEnc = false
		}
		prev = v.hi
		var k string
		if plain {
			var ok bool
			if k, ok = s.keys[string(key[1:len(key)-1])]; !ok {
				k = string(key[1 : len(key)-1])
				if len(s.keys) < 4*MaxExtraMetrics {
					if s.keys == nil {
						s.keys = map[string]string{}
					}
					s.keys[k] = k
				}
			}
		} else {
			k = unquote(key, false)
		}
		s.extras = append(s.extras, extraKV{k, v})
	}); err != nil {
		// not met: the record was scanned whole
		return nil, errorf("", "must be an object of numbers")
	}
	if len(s.extras) == 0 || prev != sp.hi-1 {
		s.lastEnc = false
	}
	if len(s.extras) == 0 {
		return nil, nil
	}
	enc := s.lastEnc
	slices.SortStableFunc(s.extras, func(a, b extraKV) int { return strings.Compare(a.key, b.key) })
	out := make(map[string]float64, len(s.extras))
	for i, kv := range s.extras {
		if kv.key == "" || utf8.RuneCountInString(kv.key) > 256 {
			return nil, s.fail(kv.v.lo, ".extra", errorf("", "keys must be 1 to 256 characters"))
		}
		if i > 0 && s.extras[i-1].key == kv.key {
			return nil, s.fail(kv.v.lo, ".extra."+kv.key, errorf("", "appears twice"))
		}
		f, err := s.float(kv.v)
		if err != nil {
			return nil, s.fail(kv.v.lo, ".extra."+kv.key, err)
		}
		enc = enc && s.lastEnc
		out[kv.key] = f
	}
	s.lastEnc = enc
	return out, nil
}
