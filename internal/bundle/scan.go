package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// The records are nearly all of a bundle, so the decoder reads a trace's
// records array with a scanner of its own rather than with encoding/json
// (which decodes each record into a map of raw values first): it reads the
// bytes of one record at a time from a buffer, checks them as JSON and
// takes the fields it knows in place. Its rules are those of the rest of
// the decoder (parseInt, parseFloat, the record's fields and limits), and
// it refuses all that encoding/json refuses, with an error that names the
// field and the line. What it adds: a field that appears twice in a record
// (or a key twice in its extra) is refused rather than the last one kept.

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

// maxDepth bounds the nesting of a value inside a record (encoding/json's
// own bound).
const maxDepth = 10_000

// scanBufSize is what the scanner reads at a time.
const scanBufSize = 64 << 10

// errShort says that the buffer ends inside the value being scanned: more
// must be read (or the document ends early).
var errShort = errors.New("short")

// syntaxError is invalid JSON at buf[at].
type syntaxError struct {
	at  int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// span is a value's bytes in the scanner's buffer.
type span struct{ lo, hi int }

type extraKV struct {
	key string
	v   span
}

// scanner reads a records array from a buffer it fills from r.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // buf[pos:] is not read yet
	off  int64 // the document's offset of buf[0]
	line int   // the line of buf[pos] (the document's first is 1)
	rerr error // the reader's failure or io.EOF, once met

	// the record being read
	spans  [numRecordFields]span
	have   uint16    // the fields seen
	twice  int       // a field seen twice (−1: none)
	others []string  // fields not known
	later  []laterKV // fields declared after the scanner's own
	extras []extraKV
	keys   map[string]string // the extra keys met so far, each one string
	floats []float64         // where the records' optional numbers are kept
}

// fill reads more into the buffer, keeping buf[keep:]; false when nothing
// more can be read (s.rerr says why). The buffer grows to hold a value of
// up to MaxValueBytes.
func (s *scanner) fill(keep int) bool {
	if s.rerr != nil {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:n]
		s.off += int64(keep)
		s.pos -= keep
	}
	if cap(s.buf)-len(s.buf) < scanBufSize/2 {
		s.buf = slices.Grow(s.buf, max(scanBufSize, len(s.buf)))
	}
	for {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.rerr = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
}

// skipSpace moves past white space, filling as needed; it returns the next
// byte, or false at the end of what can be read.
func (s *scanner) skipSpace() (byte, bool) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case '\n':
				s.line++
				s.pos++
			case ' ', '\t', '\r':
				s.pos++
			default:
				return c, true
			}
		}
		if !s.fill(s.pos) {
			return 0, false
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// ws is the index of the first byte at or after i that is not white space.
func (s *scanner) ws(i int) int {
	for i < len(s.buf) && isSpace(s.buf[i]) {
		i++
	}
	return i
}

func (s *scanner) syntax(i int, context string) error {
	if i >= len(s.buf) {
		return errShort
	}
	return &syntaxError{at: i, msg: "invalid character " + quoteChar(s.buf[i]) + " " + context}
}

// quoteChar quotes a byte as encoding/json's errors do.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// str checks the string starting at buf[i] (a quote) and returns the
// index after it and whether it is plain: ASCII without escapes, its bytes
// its value.
func (s *scanner) str(i int) (int, bool, error) {
	b := s.buf
	plain := true
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain, nil
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return 0, false, errShort
			}
			i++
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for j := 1; j <= 4; j++ {
					if i+j >= len(b) {
						return 0, false, errShort
					}
					if !isHex(b[i+j]) {
						return 0, false, s.syntax(i+j, "in \\u hexadecimal character escape")
					}
				}
				i += 4
			default:
				return 0, false, s.syntax(i, "in string escape code")
			}
		case c < 0x20:
			return 0, false, s.syntax(i, "in string literal")
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return 0, false, errShort
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number checks the number starting at buf[i] and returns the index after
// it.
func (s *scanner) number(i int) (int, error) {
	b := s.buf
	if b[i] == '-' {
		i++
		if i >= len(b) {
			return 0, errShort
		}
		if !isDigit(b[i]) {
			return 0, s.syntax(i, "in numeric literal")
		}
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) {
			return 0, errShort
		}
		if !isDigit(b[i]) {
			return 0, s.syntax(i, "after decimal point in numeric literal")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) {
			return 0, errShort
		}
		if !isDigit(b[i]) {
			return 0, s.syntax(i, "in exponent of numeric literal")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i >= len(b) {
		return 0, errShort // the number may go on
	}
	return i, nil
}

// value checks the value starting at buf[i] (not white space) and returns
// the index after it.
func (s *scanner) value(i, depth int) (int, error) {
	b := s.buf
	if i >= len(b) {
		return 0, errShort
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := s.str(i)
		return end, err
	case c == '-' || isDigit(c):
		return s.number(i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, &syntaxError{at: i, msg: "exceeded max depth"}
		}
		if c == '{' {
			return s.object(i, depth+1, nil)
		}
		return s.array(i, depth+1)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	}
	return 0, s.syntax(i, "looking for beginning of value")
}

func (s *scanner) literal(i int, lit string) (int, error) {
	for j := 1; j < len(lit); j++ {
		if i+j >= len(s.buf) {
			return 0, errShort
		}
		if s.buf[i+j] != lit[j] {
			return 0, s.syntax(i+j, "in literal "+lit+" (expecting "+quoteChar(lit[j])+")")
		}
	}
	return i + len(lit), nil
}

func (s *scanner) array(i, depth int) (int, error) {
	i = s.ws(i + 1)
	if i < len(s.buf) && s.buf[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := s.value(i, depth)
		if err != nil {
			return 0, err
		}
		i = s.ws(end)
		if i >= len(s.buf) {
			return 0, errShort
		}
		switch s.buf[i] {
		case ']':
			return i + 1, nil
		case ',':
			i = s.ws(i + 1)
		default:
			return 0, s.syntax(i, "after array element")
		}
	}
}

// object checks the object starting at buf[i] and returns the index after
// it, calling member (when not nil) with each key (its bytes with the
// quotes, and whether it is plain) and value.
func (s *scanner) object(i, depth int, member func(key []byte, plain bool, v span)) (int, error) {
	i = s.ws(i + 1)
	if i < len(s.buf) && s.buf[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.buf) {
			return 0, errShort
		}
		if s.buf[i] != '"' {
			return 0, s.syntax(i, "looking for beginning of object key string")
		}
		kend, plain, err := s.str(i)
		if err != nil {
			return 0, err
		}
		key := s.buf[i:kend]
		i = s.ws(kend)
		if i >= len(s.buf) {
			return 0, errShort
		}
		if s.buf[i] != ':' {
			return 0, s.syntax(i, "after object key")
		}
		i = s.ws(i + 1)
		end, err := s.value(i, depth)
		if err != nil {
			return 0, err
		}
		if member != nil {
			member(key, plain, span{i, end})
		}
		i = s.ws(end)
		if i >= len(s.buf) {
			return 0, errShort
		}
		switch s.buf[i] {
		case '}':
			return i + 1, nil
		case ',':
			i = s.ws(i + 1)
		default:
			return 0, s.syntax(i, "after object key:value pair")
		}
	}
}

// unquote is the value of a checked string (key: its bytes with the
// quotes): a plain one directly, another as encoding/json reads it.
func unquote(key []byte, plain bool) string {
	if plain {
		return string(key[1 : len(key)-1])
	}
	var s string
	if err := json.Unmarshal(key, &s); err != nil {
		// not met: str accepts what encoding/json reads
		return string(key[1 : len(key)-1])
	}
	return s
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
	for {
		end, err := s.scanRecord()
		if err == errShort {
			if len(s.buf)-s.pos > MaxValueBytes {
				return s.fail(s.pos, "", errorf("", "must be at most %s", sizeName(MaxValueBytes)))
			}
			if s.fill(s.pos) {
				continue
			}
		}
		if err != nil {
			return err
		}
		if err := s.fields(r); err != nil {
			return err
		}
		s.line += bytes.Count(s.buf[s.pos:end], []byte{'\n'})
		s.pos = end
		return nil
	}
}

// scanRecord checks the record at buf[s.pos] as JSON and notes where its
// fields are.
func (s *scanner) scanRecord() (int, error) {
	s.have, s.twice, s.others, s.later = 0, -1, s.others[:0], s.later[:0]
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

// plainByte are the bytes a plain string holds as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// recordObject is object for a record (at buf[i]), noting its fields, with
// the paths a record written by Encode takes made short: plain keys, no
// white space, numbers.
func (s *scanner) recordObject(i int) (int, error) {
	b := s.buf
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
		}
		key := b[i:kend]
		i = kend
		if i >= len(b) || b[i] != ':' {
			if i = s.ws(i); i >= len(b) {
				return 0, errShort
			}
			if b[i] != ':' {
				return 0, s.syntax(i, "after object key")
			}
		}
		if i++; i >= len(b) || isSpace(b[i]) {
			i = s.ws(i)
		}
		var end int
		var err error
		if i < len(b) && (b[i] == '-' || isDigit(b[i])) {
			end, err = s.number(i)
		} else {
			end, err = s.value(i, 1)
		}
		if err != nil {
			return 0, err
		}
		s.member(key, plain, span{i, end})
		if i = end; i >= len(b) || b[i] != ',' && b[i] != '}' {
			if i = s.ws(i); i >= len(b) {
				return 0, errShort
			}
		}
		switch b[i] {
		case '}':
			return i + 1, nil
		case ',':
			if i++; i >= len(b) || b[i] != '"' {
				i = s.ws(i)
			}
		default:
			return 0, s.syntax(i, "after object key:value pair")
		}
	}
}

// member notes a record's field (key: its bytes with the quotes).
func (s *scanner) member(key []byte, plain bool, v span) {
	f := -1
	if plain {
		f = recordField(key[1 : len(key)-1])
	} else if name := unquote(key, false); len(name) < 16 {
		f = recordField([]byte(name))
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
	s.have |= 1 << f
	s.spans[f] = v
}

// fields checks the fields noted by scanRecord and sets r from them, with
// the rules (and in the order) of a record's fields.
func (s *scanner) fields(r *solver.Record) error {
	*r = solver.Record{}
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
	for f := 0; f < numRecordFields; f++ {
		if s.have&(1<<f) == 0 {
			continue
		}
		sp := s.spans[f]
		v := s.buf[sp.lo:sp.hi]
		var err error
		nonNeg := func(dst *int) {
			n, ok := smallInt(v)
			if !ok {
				n, err = parseInt("", v)
			}
			if err == nil {
				if n < 0 {
					err = errorf("", "must be non-negative, got %d", n)
				}
				*dst = int(n)
			}
		}
		opt := func(dst **float64) {
			if string(v) == "null" {
				return
			}
			var x float64
			if x, err = number(v); err == nil {
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
			r.Passes, err = number(v)
		case fieldTime:
			r.Time, err = number(v)
		case fieldGamma:
			r.Gamma, err = number(v)
		case fieldStep:
			r.Step, err = step(v)
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
	if _, err := s.object(sp.lo, 1, func(key []byte, plain bool, v span) {
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
	if len(s.extras) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(s.extras, func(a, b extraKV) int { return strings.Compare(a.key, b.key) })
	out := make(map[string]float64, len(s.extras))
	for i, kv := range s.extras {
		if kv.key == "" || utf8.RuneCountInString(kv.key) > 256 {
			return nil, s.fail(kv.v.lo, ".extra", errorf("", "keys must be 1 to 256 characters"))
		}
		if i > 0 && s.extras[i-1].key == kv.key {
			return nil, s.fail(kv.v.lo, ".extra."+kv.key, errorf("", "appears twice"))
		}
		f, err := number(s.buf[kv.v.lo:kv.v.hi])
		if err != nil {
			return nil, s.fail(kv.v.lo, ".extra."+kv.key, err)
		}
		out[kv.key] = f
	}
	return out, nil
}

// lineAt is the line of buf[at] (at ≥ s.pos).
func (s *scanner) lineAt(at int) int {
	at = min(at, len(s.buf))
	return s.line + bytes.Count(s.buf[s.pos:at], []byte{'\n'})
}

// errorAt turns a failure of the scanner reading the record at path into
// the decoder's Error, naming the field and the line.
func (s *scanner) errorAt(path string, err error) error {
	if err == errShort {
		return s.ended(path)
	}
	var re *recordError
	if !errors.As(err, &re) {
		return err
	}
	fp := path + re.field
	line := s.lineAt(re.at)
	var se *syntaxError
	var fe *Error
	switch {
	case re.err == errShort:
		return s.ended(path)
	case errors.As(re.err, &se):
		return errorf(fp, "invalid JSON at byte %d: %s (line %d)", s.off+int64(se.at), se.msg, s.lineAt(se.at))
	case errors.As(re.err, &fe):
		return &Error{Path: fp, Msg: fmt.Sprintf("%s (line %d)", fe.Msg, line), Err: fe.Err}
	}
	return errorf(fp, "%v (line %d)", re.err, line)
}

// ended is the error for a document that ends, or whose reader fails,
// inside the value at path.
func (s *scanner) ended(path string) error {
	err := s.rerr
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	e := ioError(path, err)
	var be *Error
	if errors.As(e, &be) {
		be.Msg += fmt.Sprintf(" (line %d)", s.lineAt(len(s.buf)))
	}
	return e
}

// smallInt reads a JSON integer of up to 18 digits (one parseInt reads
// the same), or reports false.
func smallInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	neg := v[0] == '-'
	if neg {
		v = v[1:]
		if len(v) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = 10*n + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, int64(int(n)) == n
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads a record's number (parseFloat's rules): most directly (see
// exactFloat), the others with parseFloat.
func number(v []byte) (float64, error) {
	if x, ok := exactFloat(v); ok {
		return x, nil
	}
	return parseFloat("", v)
}

// exactFloat reads a JSON number whose digits make an integer m of at
// most 2⁵³ and whose power of ten e is at most 22 either way: both are
// float64s exactly, so m·10^e (or m/10^−e), one correctly rounded
// operation, is the float64 nearest to the number, which is what
// strconv.ParseFloat gives (Clinger's fast path). Any other value (more
// digits, a larger power, not a number) reports false.
func exactFloat(v []byte) (float64, bool) {
	i, neg := 0, false
	if i < len(v) && v[i] == '-' {
		neg = true
		i++
	}
	var m uint64
	nd, exp := 0, 0
	start := i
	for ; i < len(v) && isDigit(v[i]); i++ {
		if m == 0 && v[i] == '0' {
			continue
		}
		if nd == 16 { // 17 digits are more than 2⁵³
			return 0, false
		}
		m, nd = 10*m+uint64(v[i]-'0'), nd+1
	}
	if i == start {
		return 0, false
	}
	if i < len(v) && v[i] == '.' {
		start = i + 1
		for i++; i < len(v) && isDigit(v[i]); i++ {
			if m == 0 && v[i] == '0' {
				exp--
				continue
			}
			if nd == 16 {
				return 0, false
			}
			m, nd, exp = 10*m+uint64(v[i]-'0'), nd+1, exp-1
		}
		if i == start {
			return 0, false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		sign := 1
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			if v[i] == '-' {
				sign = -1
			}
			i++
		}
		e := 0
		start = i
		for ; i < len(v) && isDigit(v[i]); i++ {
			if e > 1000 {
				return 0, false
			}
			e = 10*e + int(v[i]-'0')
		}
		if i == start {
			return 0, false
		}
		exp += sign * e
	}
	if i != len(v) || m > 1<<53 {
		return 0, false
	}
	x := float64(m)
	switch {
	case m == 0 || exp == 0:
	case 0 < exp && exp <= 22:
		x *= pow10[exp]
	case -22 <= exp && exp < 0:
		x /= pow10[-exp]
	default:
		return 0, false
	}
	if neg {
		x = -x
	}
	return x, true
}
