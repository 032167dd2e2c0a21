package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// traceOut is one run's output for the json format and the aggregates.
type traceOut struct {
	Algo        string          `json:"algo"`
	Replication int             `json:"replication"`
	Seed        int64           `json:"seed"`
	Summary     solver.Summary  `json:"summary"`
	Records     []solver.Record `json:"records,omitempty"`
	X           []float64       `json:"-"`
}

// recordWriter writes records as JSON Lines or CSV. A record is encoded by
// hand into a reused buffer (appendRecordJSON, appendCSVRow), the
// bytes encoding/json and encoding/csv would write, at a fraction of their
// cost: an OCR pass of bcfw reports 6 251 records. Records are held and
// encoded heldRecords at a time (and before anything else is written):
// encoded one by one between a method's steps, each costs about half as
// much again, the encoder's code and tables having left the caches
// (BENCHMARKS.md, "The record path"). A held record keeps the values it
// had when written (a method may reuse what it points to): the writer
// copies its optional numbers, and a record with metrics (an evaluation,
// or a teaching trace's iterate) is written at once, after those held.
type recordWriter struct {
	w      *bufio.Writer
	format string
	tagged bool
	header bool
	enc    *json.Encoder
	buf    []byte
	held   []heldRecord
}

// heldRecords is how many records a recordWriter holds before encoding
// them: about 40 KB of OCR records, within the caches beside the method's
// data.
const heldRecords = 256

// heldRecord is a record waiting to be encoded, with its trace's tags and
// the values of its optional numbers (r points to them).
type heldRecord struct {
	algo           string
	rep            int
	r              solver.Record
	obj, gap, gerr float64
}

func newRecordWriter(w *bufio.Writer, format string, tagged bool) *recordWriter {
	// (held never grows past its capacity: its records point into it)
	return &recordWriter{w: w, format: format, tagged: tagged, enc: json.NewEncoder(w), held: make([]heldRecord, 0, heldRecords)}
}

// csvHeader is the CSV output's header row (after algo and replication when
// tagged): the record's declared columns (internal/recordfields), the
// problem-specific metrics last.
var csvHeader = append(recordfields.CSVHeader(), recordfields.MetricsField.CSV)

// jsonStyle writes a record as json.Marshal does (solver.Record's
// MarshalJSON): a non-finite number as 0, or left out where optional.
var jsonStyle = recordfields.JSONStyle{
	Float: func(b []byte, f float64) []byte {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		return solver.AppendJSONFloat(b, f)
	},
	Str:  fw.AppendJSONString,
	Keep: func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) },
}

// appendRecordJSON appends the record's JSON object, field by declared
// field.
func appendRecordJSON(b []byte, r *solver.Record) []byte {
	b = append(b, '{')
	b = recordfields.AppendJSON(b, r, &jsonStyle)
	return append(b, '}')
}

// csvStyle writes numbers as strconv does ('g', NaN and ±Inf spelt out).
var csvStyle = recordfields.CSVStyle{
	Float: func(b []byte, f float64) []byte { return fw.AppendFloat(b, f, 'g') },
	Str:   appendCSVField,
}

// appendExtraCell appends a record's problem-specific metrics as one JSON
// object (keys sorted, non-finite values null): their keys are not known
// before the run (a 2-D trace has one weight per vertex it visits), and rows
// are written as the run goes. Nothing for no metrics.
func appendExtraCell(b []byte, e map[string]float64) []byte {
	if len(e) == 0 {
		return b
	}
	n := len(b)
	if b = recordfields.AppendMetrics(b, e, &extraCellStyle); len(b) == n {
		b = append(b, "{}"...) // only the solver's slots
	}
	return b
}

// extraCellStyle writes the metrics' cell: a non-finite value as null.
var extraCellStyle = recordfields.JSONStyle{
	Float: func(b []byte, f float64) []byte {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(b, "null"...)
		}
		return solver.AppendJSONFloat(b, f)
	},
	Str: fw.AppendJSONString,
}

// appendCSVField appends one field as encoding/csv writes it (comma
// separated, LF line ends): quoted, with its quotes doubled, when it holds a
// comma, a quote or a line break, starts with a space, or is \.
func appendCSVField(b []byte, f string) []byte {
	quote := f == `\.`
	for i := 0; i < len(f) && !quote; i++ {
		c := f[i]
		quote = c == ',' || c == '"' || c == '\r' || c == '\n'
	}
	if !quote && f != "" {
		r, _ := utf8.DecodeRuneInString(f)
		quote = unicode.IsSpace(r)
	}
	if !quote {
		return append(b, f...)
	}
	b = append(b, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, f[i])
	}
	return append(b, '"')
}

// appendCSVRow appends the record's CSV row, line end included.
func appendCSVRow(b []byte, r *solver.Record) []byte {
	b = recordfields.AppendCSV(b, r, &csvStyle)
	b = append(b, ',')
	if recordfields.MetricCount(r) > 0 {
		// the cell is a JSON object: it holds quotes, so it is quoted
		start := len(b)
		b = appendExtraCell(b, r.Extra)
		cell := string(b[start:])
		b = appendCSVField(b[:start], cell)
	}
	return append(b, '\n')
}

// write writes a record: held until heldRecords are (or until drain), or
// at once when it carries metrics.
func (rw *recordWriter) write(algo string, rep int, r solver.Record) {
	if len(r.Extra) > 0 {
		rw.drain()
		rw.encode(algo, rep, &r)
		return
	}
	rw.held = append(rw.held, heldRecord{algo: algo, rep: rep, r: r})
	h := &rw.held[len(rw.held)-1]
	hold(&h.r.Objective, &h.obj)
	hold(&h.r.Gap, &h.gap)
	hold(&h.r.GradErr, &h.gerr)
	if len(rw.held) >= heldRecords {
		rw.drain()
	}
}

// hold copies the number *p points to into v and points *p at v (nil
// stays nil).
func hold(p **float64, v *float64) {
	if *p != nil {
		*v = **p
		*p = v
	}
}

// drain encodes the held records in order.
func (rw *recordWriter) drain() {
	for i := range rw.held {
		h := &rw.held[i]
		rw.encode(h.algo, h.rep, &h.r)
	}
	rw.held = rw.held[:0]
}

// encode writes one record.
func (rw *recordWriter) encode(algo string, rep int, r *solver.Record) {
	b := rw.buf[:0]
	switch rw.format {
	case "jsonl":
		if rw.tagged {
			// splice the tags into the record's own JSON object
			b = append(b, `{"algo":`...)
			b = strconv.AppendQuote(b, algo)
			b = append(b, `,"replication":`...)
			b = strconv.AppendInt(b, int64(rep), 10)
			b = append(b, ',')
			start := len(b)
			b = appendRecordJSON(b, r)
			b = append(b[:start], b[start+1:]...)
		} else {
			b = appendRecordJSON(b, r)
		}
		b = append(b, '\n')
	case "csv":
		if !rw.header {
			h := csvHeader
			if rw.tagged {
				h = append([]string{"algo", "replication"}, h...)
			}
			for i, f := range h {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendCSVField(b, f)
			}
			b = append(b, '\n')
			rw.header = true
		}
		if rw.tagged {
			b = appendCSVField(b, algo)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(rep), 10)
			b = append(b, ',')
		}
		b = appendCSVRow(b, r)
	}
	rw.w.Write(b)
	rw.buf = b
}

// line writes v as one JSON line, after the held records.
func (rw *recordWriter) line(v any) {
	rw.drain()
	rw.enc.Encode(sanitize(v))
}

// summary writes a trace's summary: a line of the output after its
// records (jsonl), or of stderr (csv).
func (rw *recordWriter) summary(algo string, rep int, seed int64, s solver.Summary, stderr io.Writer) {
	body := map[string]any{"objective": s.Objective, "gap": s.Gap, "iters": s.Iters, "passes": s.Passes, "time_s": s.Time, "status": s.Status, "message": s.Message}
	if rw.tagged {
		body["algo"], body["replication"], body["seed"] = algo, rep, seed
	}
	if rw.format == "csv" {
		b, _ := json.Marshal(sanitize(map[string]any{"summary": body}))
		fmt.Fprintln(stderr, string(b))
		return
	}
	rw.line(map[string]any{"summary": body})
}

// flush encodes the held records into w (which the caller flushes).
func (rw *recordWriter) flush() error {
	rw.drain()
	return nil
}

// progress prints a status line on stderr when stderr is a terminal.
type progress struct {
	w    io.Writer
	on   bool
	last time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) show(algo string, rep int, r solver.Record) {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	obj, gap := "-", "-"
	if r.Objective != nil {
		obj = strconv.FormatFloat(*r.Objective, 'g', 8, 64)
	}
	if r.Gap != nil {
		gap = strconv.FormatFloat(*r.Gap, 'g', 3, 64)
	}
	fmt.Fprintf(p.w, "\r\033[K%s#%d k=%d passes=%.2f objective=%s gap=%s", algo, rep, r.K, r.Passes, obj, gap)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
