package bundle

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// Encode writes b as a bundle of the current format version, streaming: the
// records go out as they are encoded, a few tens of kilobytes at a time.
func Encode(w io.Writer, b *Bundle) error {
	return encode(w, b, func(i int, emit func(*solver.Record) error) error {
		for j := range b.Traces[i].Records {
			if err := emit(&b.Traces[i].Records[j]); err != nil {
				return err
			}
		}
		return nil
	})
}

// encode writes b with the records of trace i given by records (b's own
// Records are not read).
func encode(w io.Writer, b *Bundle, records func(i int, emit func(*solver.Record) error) error) error {
	return encodeAs(w, b, FormatVersion, records)
}

// encodeAs is encode with the head saying format version v.
func encodeAs(w io.Writer, b *Bundle, v int64, records func(i int, emit func(*solver.Record) error) error) error {
	e := &encoder{w: w, version: v}
	var dg digester
	e.header(b)
	e.buf = append(e.buf, `,"traces":[`...)
	for i := range b.Traces {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.traceHead(i, &b.Traces[i])
		e.buf = append(e.buf, `,"records":[`...)
		j := 0
		err := records(i, func(r *solver.Record) error {
			dg.record(r)
			if j > 0 {
				e.buf = append(e.buf, ',')
			}
			j++
			e.buf = append(e.buf, '\n')
			e.record(r)
			if len(e.buf) > 32<<10 {
				e.flush()
			}
			return e.err
		})
		if err != nil {
			return err
		}
		e.buf = append(e.buf, "]}"...)
		dg.endRecords()
	}
	e.buf = append(e.buf, "]"...)
	if len(b.Aggregates) > 0 {
		e.buf = append(e.buf, ",\n\"aggregates\":"...)
		e.raw("aggregates", b.Aggregates)
	}
	e.buf = append(e.buf, ",\n\"digest\":"...)
	e.str(dg.sum(b.Traces))
	e.buf = append(e.buf, "}\n"...)
	e.flush()
	return e.err
}

// header writes the bundle's fields before its traces: the format, the
// run's version, status, times, name and note, its spec and its instance.
func (e *encoder) header(b *Bundle) {
	e.buf = append(e.buf, `{"format":`...)
	e.str(Format)
	e.buf = append(e.buf, `,"format_version":`...)
	e.buf = strconv.AppendInt(e.buf, e.version, 10)
	e.buf = append(e.buf, `,"version":`...)
	e.str(b.Version)
	e.optStr("status", b.Status)
	if !b.Created.IsZero() {
		e.optStr("created", b.Created.UTC().Format(timeFormat))
	}
	if !b.Ended.IsZero() {
		e.optStr("ended", b.Ended.UTC().Format(timeFormat))
	}
	e.optStr("name", b.Name)
	e.optStr("note", b.Note)
	e.buf = append(e.buf, `,"spec":`...)
	e.json("spec", b.Spec)
	e.buf = append(e.buf, `,"info":{"dim":`...)
	e.buf = strconv.AppendInt(e.buf, int64(b.Info.Dim), 10)
	e.buf = append(e.buf, `,"samples":`...)
	e.buf = strconv.AppendInt(e.buf, int64(b.Info.Samples), 10)
	e.buf = append(e.buf, `,"blocks":`...)
	e.buf = strconv.AppendInt(e.buf, int64(b.Info.Blocks), 10)
	if b.Info.FStar != nil {
		e.buf = append(e.buf, `,"fstar":`...)
		e.float(*b.Info.FStar)
	}
	if len(b.Info.Panels) > 0 {
		e.buf = append(e.buf, `,"panels":`...)
		e.raw("info.panels", b.Info.Panels)
	}
	e.buf = append(e.buf, '}')
}

// optStr writes ,"key":"v" unless v is empty.
func (e *encoder) optStr(key, v string) {
	if v == "" {
		return
	}
	e.buf = append(e.buf, ',', '"')
	e.buf = append(e.buf, key...)
	e.buf = append(e.buf, '"', ':')
	e.str(v)
}

// traceHead writes trace i's fields before its records: its algorithm,
// replication, seed, status, summary and panels.
func (e *encoder) traceHead(i int, t *Trace) {
	e.buf = append(e.buf, "\n{\"algo\":"...)
	e.str(t.Algo)
	e.buf = append(e.buf, `,"replication":`...)
	e.buf = strconv.AppendInt(e.buf, int64(t.Replication), 10)
	e.buf = append(e.buf, `,"seed":`...)
	e.buf = strconv.AppendInt(e.buf, t.Seed, 10)
	e.optStr("status", t.Status)
	if s := t.Summary; s != nil {
		e.buf = append(e.buf, `,"summary":{"objective":`...)
		e.float(s.Objective)
		e.buf = append(e.buf, `,"gap":`...)
		e.float(s.Gap)
		e.buf = append(e.buf, `,"iters":`...)
		e.buf = strconv.AppendInt(e.buf, int64(s.Iters), 10)
		e.buf = append(e.buf, `,"passes":`...)
		e.float(s.Passes)
		e.buf = append(e.buf, `,"time_s":`...)
		e.float(s.Time)
		e.buf = append(e.buf, `,"status":`...)
		e.str(s.Status)
		e.buf = append(e.buf, `,"message":`...)
		e.str(s.Message)
		e.buf = append(e.buf, '}')
	}
	if len(t.Panels) > 0 {
		e.buf = append(e.buf, `,"panels":`...)
		e.raw(fmt.Sprintf("traces[%d].panels", i), t.Panels)
	}
	e.optStr("panels_error", t.PanelsError)
}

// timeFormat writes times in RFC 3339 to the microsecond (the store's
// resolution), so that a stored run exports the bundle it came from.
const timeFormat = "2006-01-02T15:04:05.999999Z07:00"

type encoder struct {
	w       io.Writer
	buf     []byte
	err     error
	style   *recordfields.JSONStyle // how records are written (nil: recordStyle)
	version int64                   // the format version the head says (encodeAs)
}

func (e *encoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) str(s string) { e.buf = appendString(e.buf, s) }

// appendString appends s as encoding/json writes it: directly when it has
// nothing to escape, else by encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

func (e *encoder) json(field string, v any) {
	b, err := json.Marshal(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("bundle: encoding %s: %w", field, err)
	}
	e.buf = append(e.buf, b...)
}

// raw appends a JSON value kept as text, compacted (and checked).
func (e *encoder) raw(field string, m json.RawMessage) {
	n := len(e.buf)
	var err error
	if e.buf, err = appendCompact(e.buf, m); err != nil && e.err == nil {
		e.err = fmt.Errorf("bundle: %s: not valid JSON: %w", field, err)
		e.buf = e.buf[:n]
	}
}

// float appends f in the shortest form that reads back exactly, or as
// "NaN", "Inf", "-Inf".
func (e *encoder) float(f float64) { e.buf = appendFloat(e.buf, f) }

func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return fw.AppendFloat(b, f, 'g')
}

// record appends r with the field names and omissions of solver.Record's
// JSON (objective and gap always, as null when not evaluated), field by
// declared field.
func (e *encoder) record(r *solver.Record) {
	e.buf = append(e.buf, '{')
	st := e.style
	if st == nil {
		st = &recordStyle
	}
	e.buf = recordfields.AppendJSON(e.buf, r, st)
	e.buf = append(e.buf, '}')
}

// recordStyle writes a record's fields as the declaration says
// (internal/recordfields), non-finite numbers as "NaN", "Inf", "-Inf".
var recordStyle = recordfields.JSONStyle{Float: appendFloat, Str: appendString}
