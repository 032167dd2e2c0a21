package bundle

import (
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// An import's content digest hashes every record as the encoder writes it
// (contentDigest). A bundle written by fwlab has its records in exactly
// that form, so while the scanner reads a record it notes whether the text
// is the encoder's own, and Import keeps that text for the digest to hash
// as it is, instead of writing the record again (which costs about as much
// as reading it). The check is sound, not complete: a record it does not
// recognise (white space, another order, an escape, a number spelt
// otherwise) is written again. TestCanonicalIsTheEncoders and
// FuzzCanonicalRecord hold it to the encoder (recordfields.AppendJSON).

// canonical reports whether the record just read into r is the encoder's
// text of r: no white space, no escaped key, its fields in the
// declaration's order (the scanner notes these), exactly the fields the
// encoder writes for r (emittedFields), each value in the encoder's form
// (s.enc).
func (s *scanner) canonical(r *solver.Record) bool {
	if s.loose || len(s.later) > 0 {
		return false
	}
	want, ok := emittedFields(r)
	return ok && s.have == want && s.enc&want == want
}

// always are the scanner's fields the encoder writes for every record
// (bits by scanner field, which are the declaration's first ones); omits
// are the scanner's fields it may leave out (when zero, or the metrics
// when none is kept), later the fields after the scanner's own
// (laterFields).
var always, omits, later = func() (a uint16, o, l []int) {
	for i, f := range recordfields.Fields {
		switch {
		case i >= numRecordFields:
			l = append(l, i)
		case f.Omit || f.Kind == recordfields.Metrics:
			o = append(o, i)
		default:
			a |= 1 << i
		}
	}
	return a, o, l
}()

// emittedFields are the scanner's fields the encoder writes for r (a bit
// each), and false when it writes a field after them.
func emittedFields(r *solver.Record) (uint16, bool) {
	m := always
	for _, i := range omits {
		if emitted(&recordfields.Fields[i], r) {
			m |= 1 << i
		}
	}
	for _, i := range later {
		if emitted(&recordfields.Fields[i], r) {
			return 0, false
		}
	}
	return m, true
}

// emitted reports whether recordfields.AppendJSON, with the record style
// (which keeps every value), writes f for r.
func emitted(f *recordfields.Field, r *solver.Record) bool {
	switch f.Kind {
	case recordfields.Int:
		return !f.Omit || f.Int(r) != 0
	case recordfields.OptFloat:
		_, set := f.Opt(r)
		return set || !f.Omit
	case recordfields.Metrics:
		for k := range r.Extra {
			if !recordfields.IsSlot(k) {
				return true
			}
		}
		return false // none kept: nothing, whatever f.Omit says
	}
	return true
}

// canonicalSmallInt reports whether v, an integer smallInt read, is as
// strconv.AppendInt writes it: without a leading zero (0 alone), a minus
// sign only before a number other than 0.
func canonicalSmallInt(v []byte) bool {
	neg := v[0] == '-'
	if neg {
		v = v[1:] // smallInt read digits after it
	}
	if v[0] == '0' {
		return len(v) == 1 && !neg
	}
	return true
}

// encoderPlain reports whether appendString writes a string of these
// bytes as they are, between quotes: printable ASCII but the quote, the
// backslash and the three characters encoding/json escapes for HTML (<,
// >, &).
func encoderPlain(b []byte) bool {
	for _, c := range b {
		if !plainByte[c] || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
