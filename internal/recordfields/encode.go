package recordfields

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/solver"
)

// JSONStyle is how one encoding writes numbers and strings: the server's
// and `solve`'s JSON write a non-finite number as null or leave it out, the
// bundle's as "NaN", "Inf", "-Inf".
type JSONStyle struct {
	Float func(b []byte, f float64) []byte // a number (Int fields are written by strconv)
	Str   func(b []byte, s string) []byte  // a JSON string
	// Keep reports whether an optional number or a metric of this value is
	// written (nil: always); one not kept is written as absent.
	Keep func(f float64) bool
}

// keys[i] is `,"name":` of Fields[i].
var keys = func() [][]byte {
	out := make([][]byte, len(Fields))
	for i, f := range Fields {
		out[i] = []byte(`,"` + f.JSON + `":`)
	}
	return out
}()

// AppendJSON appends the record's fields as the members of a JSON object,
// in declaration order, without the braces (the first member without a
// leading comma): Omit fields are left out when zero, an unset OptFloat is
// null (or left out when Omit), the metrics are an object with sorted keys,
// left out when none is kept.
func AppendJSON(b []byte, r *solver.Record, st *JSONStyle) []byte {
	first := true
	for i := range Fields {
		f := &Fields[i]
		key := keys[i]
		if first {
			key = key[1:]
		}
		switch f.Kind {
		case Int:
			v := f.Int(r)
			if f.Omit && v == 0 {
				continue
			}
			b = append(b, key...)
			b = strconv.AppendInt(b, int64(v), 10)
		case Float:
			b = append(b, key...)
			b = st.Float(b, f.Float(r))
		case String:
			b = append(b, key...)
			b = st.Str(b, f.Str(r))
		case OptFloat:
			v, ok := f.Opt(r)
			ok = ok && (st.Keep == nil || st.Keep(v))
			switch {
			case ok:
				b = append(b, key...)
				b = st.Float(b, v)
			case f.Omit:
				continue
			default:
				b = append(b, key...)
				b = append(b, "null"...)
			}
		case Metrics:
			b = appendMetrics(b, r.Extra, key, st)
		}
		first = false
	}
	return b
}

// AppendMetrics appends m's kept metrics as a JSON object with sorted
// keys, or nothing when none is kept (solve's CSV writes them in one cell).
func AppendMetrics(b []byte, m map[string]float64, st *JSONStyle) []byte {
	return appendMetrics(b, m, nil, st)
}

// appendMetrics appends key and m's kept metrics as an object with sorted
// keys, or nothing when none is kept.
func appendMetrics(b []byte, m map[string]float64, key []byte, st *JSONStyle) []byte {
	if len(m) == 0 {
		return b
	}
	// the kept metrics with their values, read in one pass over the map
	var small [16]metric
	kept := small[:0]
	for k, v := range m {
		if (st.Keep == nil || st.Keep(v)) && !IsSlot(k) {
			kept = append(kept, metric{k, v})
		}
	}
	if len(kept) == 0 {
		return b
	}
	slices.SortFunc(kept, func(a, b metric) int { return strings.Compare(a.key, b.key) })
	b = append(b, key...)
	b = append(b, '{')
	for i, x := range kept {
		if i > 0 {
			b = append(b, ',')
		}
		b = st.Str(b, x.key)
		b = append(b, ':')
		b = st.Float(b, x.v)
	}
	return append(b, '}')
}

// metric is one metric of a record's map.
type metric struct {
	key string
	v   float64
}

// CSVStyle is how one CSV encoding writes its cells.
type CSVStyle struct {
	Float func(b []byte, f float64) []byte // a number cell
	Str   func(b []byte, s string) []byte  // a text cell, quoted as it needs
}

// CSVHeader is the CSV columns of the declared fields but the metrics, in
// order; the metrics' column or columns follow them (MetricsField.CSV).
func CSVHeader() []string {
	var out []string
	for _, f := range Fields {
		if f.Kind != Metrics {
			out = append(out, f.CSV)
		}
	}
	return out
}

// AppendCSV appends the record's cells but the metrics', comma separated,
// in CSVHeader's order: every Int (0 when zero), an unset OptFloat as an
// empty cell. The caller appends the metrics' cells (one JSON cell, or one
// per metric the download carries) and the line end.
func AppendCSV(b []byte, r *solver.Record, st *CSVStyle) []byte {
	first := true
	for i := range Fields {
		f := &Fields[i]
		if f.Kind == Metrics {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		switch f.Kind {
		case Int:
			b = strconv.AppendInt(b, int64(f.Int(r)), 10)
		case Float:
			b = st.Float(b, f.Float(r))
		case String:
			b = st.Str(b, f.Str(r))
		case OptFloat:
			if v, ok := f.Opt(r); ok {
				b = st.Float(b, v)
			}
		}
	}
	return b
}
