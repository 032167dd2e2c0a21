package server

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
)

// The records are encoded by hand rather than with encoding/json: the
// websocket and the trace download send up to millions of them, and a
// diverging method may produce a non-finite γ or objective, which
// encoding/json refuses (failing the whole batch). Here a non-finite number
// is written as null. Field names and omissions follow solver.Record's JSON
// tags exactly (a test checks the two encodings agree on finite records).

// tags identify a record's trace in downloads.
type tags struct {
	trace       int
	algo        string
	replication int
}

// appendRecord appends rec as a JSON object; with tg, the object starts with
// the trace, algo and replication tags.
func appendRecord(b []byte, rec *solver.Record, tg *tags) []byte {
	b = append(b, '{')
	if tg != nil {
		b = append(b, `"trace":`...)
		b = strconv.AppendInt(b, int64(tg.trace), 10)
		b = append(b, `,"algo":`...)
		b = appendString(b, tg.algo)
		b = append(b, `,"replication":`...)
		b = strconv.AppendInt(b, int64(tg.replication), 10)
		b = append(b, ',')
	}
	b = recordfields.AppendJSON(b, rec, &jsonStyle)
	return append(b, '}')
}

// jsonStyle writes non-finite numbers as null.
var jsonStyle = recordfields.JSONStyle{Float: appendFloat, Str: appendString}

// appendFloat writes a finite number in the shortest form that reads back
// exactly, and null for NaN and ±Inf.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return fw.AppendFloat(b, f, 'g')
}

// appendString writes s as a JSON string (invalid UTF-8 becomes U+FFFD, as
// encoding/json does).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// csvHeader is the trace download's CSV header (the wire contract): the
// trace's tags and the record's declared columns (internal/recordfields);
// a column "extra.KEY" follows for every problem-specific metric KEY that
// some record of the download carries, in key order.
var csvHeader = "trace,algo,replication," + strings.Join(recordfields.CSVHeader(), ",") + "\n"

// extraKeys returns the sorted union of the Extra keys of the first lens[i]
// records of every trace, or the error of a read that failed.
func extraKeys(traces []*session.Trace, lens []int) ([]string, error) {
	seen := map[string]bool{}
	for i, t := range traces {
		if _, err := t.Walk(0, lens[i], func(_ int, rec *solver.Record) bool {
			for k := range rec.Extra {
				if !recordfields.IsSlot(k) {
					seen[k] = true
				}
			}
			return true
		}); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// appendCSVHeader appends the header line for the given extra keys.
func appendCSVHeader(b []byte, extras []string) []byte {
	b = append(b, csvHeader[:len(csvHeader)-1]...)
	for _, k := range extras {
		b = append(b, ',')
		b = appendCSVText(b, "extra."+k)
	}
	return append(b, '\n')
}

// appendCSV appends one CSV row; unevaluated (and non-finite) numbers are
// empty cells, as are the extra columns a record does not carry.
func appendCSV(b []byte, rec *solver.Record, tg *tags, extras []string) []byte {
	b = strconv.AppendInt(b, int64(tg.trace), 10)
	b = append(b, ',')
	b = appendCSVText(b, tg.algo)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(tg.replication), 10)
	b = append(b, ',')
	b = recordfields.AppendCSV(b, rec, &csvStyle)
	for _, k := range extras {
		b = append(b, ',')
		if v, ok := rec.Extra[k]; ok {
			b = appendCSVFloat(b, v)
		}
	}
	return append(b, '\n')
}

// csvStyle leaves non-finite numbers' cells empty.
var csvStyle = recordfields.CSVStyle{Float: appendCSVFloat, Str: appendCSVText}

func appendCSVFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b
	}
	return fw.AppendFloat(b, f, 'g')
}

// appendCSVText appends a text cell: one a spreadsheet would run as a
// formula (see formulaLike) is prefixed with a single quote, and a cell is
// quoted when it needs it (RFC 4180).
func appendCSVText(b []byte, s string) []byte {
	if formulaLike(s) {
		s = "'" + s
	}
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// formulaLike reports whether a spreadsheet would read a text cell as a
// formula (the OWASP rule): it begins with =, +, -, @, a tab or a carriage
// return, except a cell beginning with - that is a number.
func formulaLike(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '+', '@', '\t', '\r':
		return true
	case '-':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	}
	return false
}
