package bundle

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
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
	forms  *numberForms      // where the numbers read in the encoder's form go (nil: nowhere)

	// whether the record is in the encoder's form (canonical): loose when
	// it has white space, an escaped key or its fields out of order (last:
	// the field before); enc, the fields whose values are (with forms);
	// lastEnc, whether the value just read is
	loose   bool
	last    int
	enc     uint16
	lastEnc bool

	// the float fields' numbers read while the record was scanned
	// (quickFloat), with a bit each, and whether in the encoder's form
	quick, quickEnc uint16
	quickX          [numRecordFields]float64
	pending         []pendingForm // the numbers in the encoder's form (with forms)

	// quickForms has quickFloat tell whether a number is in the encoder's
	// form though forms is nil: a reader whose records' fields are read by
	// another goroutine, which keeps the forms (see convert.go)
	quickForms bool
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

// skipDigits is the index after the digits starting at b[i], read eight at
// a time while eight follow (a long fraction's).
func skipDigits(b []byte, i int) int {
	for i+8 <= len(b) && allDigits(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

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
		i = skipDigits(b, i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) {
			return 0, errShort
		}
		if !isDigit(b[i]) {
			return 0, s.syntax(i, "after decimal point in numeric literal")
		}
		i = skipDigits(b, i)
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

// plainByte are the bytes a plain string holds as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

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
