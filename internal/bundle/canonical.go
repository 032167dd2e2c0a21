package bundle

import (
	"github.com/fwlab/fwlab/internal/recordfields"
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

// canonical reports whether the record just read is the encoder's text
// of what was read: no white space, no escaped key, its fields in the
// declaration's order (s.loose), each value in the encoder's form (s.enc,
// which for a field the encoder leaves out when zero or null also says it
// is not), and every field the encoder always writes there. A field left
// out reads as zero or null, which the encoder leaves out too.
func (s *scanner) canonical() bool {
	return !s.loose && len(s.later) == 0 && !laterAlways && s.have&always == always && s.enc&s.have == s.have
}

// always are the scanner's fields the encoder writes for every record, a
// bit each (the scanner's fields are the declaration's first ones);
// omitField those it leaves out when zero or null (the metrics: when none
// is kept); laterAlways says whether it always writes a field declared
// after them (laterFields: then no record is in its form here).
var always, omitField, laterAlways = func() (a uint16, o [numRecordFields]bool, l bool) {
	for i, f := range recordfields.Fields {
		switch {
		case i >= numRecordFields:
			l = l || !f.Omit && f.Kind != recordfields.Metrics
		case f.Omit || f.Kind == recordfields.Metrics:
			o[i] = true
		default:
			a |= 1 << i
		}
	}
	return a, o, l
}()

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
