package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Error is a decoding failure: Path names the field where reading stopped
// (in the style of the spec's field errors: traces[0].records[12].gap; ""
// for the document as a whole) and Msg the rule broken.
type Error struct {
	Path string
	Msg  string
	Err  error // the reader's own failure, if that is what stopped decoding
}

// Unwrap returns the reader's failure (so that errors.As finds, say, an
// *http.MaxBytesError behind a bundle.Error).
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Path == "" {
		return "bundle: " + e.Msg
	}
	return "bundle: " + e.Path + ": " + e.Msg
}

func errorf(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Limits on what a bundle may hold (beyond the spec's own).
const (
	MaxTextLen = 10_000 // characters of a name, note, status, step, message or extra key
	// MaxPanelBytes bounds a panel (the instance's, or a trace's final
	// estimate's) as JSON.
	MaxPanelBytes = 4 << 20
	// MaxExtraMetrics bounds the distinct extra metrics (record.extra
	// keys) of a trace: each is a chart on the run page.
	MaxExtraMetrics = 64
	// MaxValueBytes bounds any other single value: a record, the spec, a
	// summary, a string.
	MaxValueBytes = 1 << 20
)

// Decode reads one bundle from r and validates it (see the package
// documentation), holding all of it in memory (Import streams a bundle into
// a store instead). Nothing may follow the bundle but white space.
func Decode(r io.Reader) (*Bundle, error) {
	ms := &memSink{}
	d := newDecoder(r, ms)
	b, err := d.bundle()
	if err != nil {
		return nil, err
	}
	b.Traces = ms.traces
	return b, nil
}

// ioError turns a reading failure at path into an Error.
func ioError(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(path, "the document ends early (truncated?)")
	case errors.As(err, &se):
		return errorf(path, "invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	var tl *tooLarge
	if errors.As(err, &tl) {
		return errorf(path, "must be at most %s", sizeName(tl.max))
	}
	return &Error{Path: path, Msg: err.Error(), Err: err}
}

func (d *decoder) token(path string) (json.Token, error) {
	d.src.arm(MaxValueBytes)
	t, err := d.dec.Token()
	if err != nil {
		return nil, ioError(path, err)
	}
	return t, nil
}

func (d *decoder) delim(path string, want json.Delim) error {
	t, err := d.token(path)
	if err != nil {
		return err
	}
	if got, ok := t.(json.Delim); !ok || got != want {
		return errorf(path, "must be %s, got %s", delimName(want), describe(t))
	}
	return nil
}

func delimName(d json.Delim) string {
	if d == '{' {
		return "an object"
	}
	return "an array"
}

// describe names a token's kind for an error, quoting at most a few
// characters of input.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "the string " + quoteShort(v)
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", t)
}

func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 32 {
		r := []rune(s)
		s = string(r[:32]) + "…"
	}
	return strconv.Quote(s)
}

// key reads the next object key, or reports the object's end.
func (d *decoder) key(path string) (string, bool, error) {
	t, err := d.token(path)
	if err != nil {
		return "", false, err
	}
	if t == json.Delim('}') {
		return "", false, nil
	}
	k, ok := t.(string)
	if !ok {
		return "", false, errorf(path, "expected a field name, got %s", describe(t))
	}
	return k, true, nil
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// raw reads the next value whole (at most MaxValueBytes).
func (d *decoder) raw(path string) (json.RawMessage, error) {
	return d.rawMax(path, MaxValueBytes)
}

// rawMax reads the next value whole, refusing one over max bytes (max < 0:
// no bound) without reading much more of it than that.
func (d *decoder) rawMax(path string, max int64) (json.RawMessage, error) {
	d.src.arm(max)
	var m json.RawMessage
	if err := d.dec.Decode(&m); err != nil {
		return nil, ioError(path, err)
	}
	if max >= 0 && int64(len(m)) > max {
		return nil, errorf(path, "must be at most %s, got %d bytes", sizeName(max), len(m))
	}
	return m, nil
}

func (d *decoder) string(path string) (string, error) {
	t, err := d.token(path)
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", errorf(path, "must be a string, got %s", describe(t))
	}
	if utf8.RuneCountInString(s) > MaxTextLen {
		return "", errorf(path, "must be at most %d characters", MaxTextLen)
	}
	return s, nil
}

func (d *decoder) int(path string) (int64, error) {
	m, err := d.raw(path)
	if err != nil {
		return 0, err
	}
	return parseInt(path, m)
}

func parseInt(path string, m json.RawMessage) (int64, error) {
	v, err := strconv.ParseInt(string(m), 10, 64)
	if err != nil || int64(int(v)) != v {
		return 0, errorf(path, "must be an integer, got %s", rawShort(m))
	}
	return v, nil
}

// rawShort quotes a few characters of a raw value for an error.
func rawShort(m json.RawMessage) string {
	s := string(m)
	if s == "null" {
		return "null"
	}
	return quoteShort(s)
}

// parseFloat reads a number or one of the strings "NaN", "Inf", "-Inf".
func parseFloat(path string, m json.RawMessage) (float64, error) {
	switch string(m) {
	case `"NaN"`:
		return math.NaN(), nil
	case `"Inf"`:
		return math.Inf(1), nil
	case `"-Inf"`:
		return math.Inf(-1), nil
	}
	if len(m) > 0 && (m[0] == '-' || '0' <= m[0] && m[0] <= '9') {
		if v, err := strconv.ParseFloat(string(m), 64); err == nil {
			return v, nil
		}
	}
	return 0, errorf(path, `must be a number, "NaN", "Inf" or "-Inf", got %s`, rawShort(m))
}

func parseTime(path, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errorf(path, "must be a time in RFC 3339 form (2006-01-02T15:04:05Z), got %s", quoteShort(s))
	}
	return t, nil
}

// strict decodes a raw object into v, refusing unknown fields, and names
// the path on failure.
func strict(path string, m json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(m))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var fe *spec.FieldError
		switch {
		case errors.As(err, &fe):
			return errorf(join(path, fe.Field), "%s", fe.Msg)
		case errors.As(err, &te):
			return errorf(join(path, te.Field), "must be %s, got %s", typeName(te.Type.String()), te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return errorf(join(path, strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)), "unknown field")
		}
		return ioError(path, err)
	}
	return nil
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}

func summary(path string, m json.RawMessage) (*solver.Summary, error) {
	var raw map[string]json.RawMessage
	if err := strict(path, m, &raw); err != nil {
		return nil, err
	}
	s := &solver.Summary{}
	fields := []string{"objective", "gap", "iters", "passes", "time_s", "status", "message"}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(fields, k) {
			return nil, errorf(join(path, k), "unknown field")
		}
	}
	for _, k := range fields {
		v, ok := raw[k]
		if !ok {
			continue
		}
		fp := join(path, k)
		var err error
		switch k {
		case "objective":
			s.Objective, err = parseFloat(fp, v)
		case "gap":
			s.Gap, err = parseFloat(fp, v)
		case "passes":
			s.Passes, err = parseFloat(fp, v)
		case "time_s":
			s.Time, err = parseFloat(fp, v)
		case "iters":
			var n int64
			n, err = parseInt(fp, v)
			s.Iters = int(n)
		case "status", "message":
			var str string
			if err = json.Unmarshal(v, &str); err != nil {
				err = errorf(fp, "must be a string, got %s", rawShort(v))
			} else if k == "status" {
				s.Status = str
			} else {
				s.Message = str
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for _, req := range []string{"objective", "gap", "iters", "passes", "time_s", "status"} {
		if _, ok := raw[req]; !ok {
			return nil, errorf(join(path, req), "is required")
		}
	}
	return s, nil
}

// recordFields are a record's fields in the order they are checked (and
// written), as declared (internal/recordfields).
var recordFields, requiredRecordFields = func() (all, req []string) {
	for _, f := range recordfields.Fields {
		all = append(all, f.JSON)
		if f.Required {
			req = append(req, f.JSON)
		}
	}
	return all, req
}()

func record(path string, raw map[string]json.RawMessage) (solver.Record, error) {
	var r solver.Record
	for _, req := range requiredRecordFields {
		if _, ok := raw[req]; !ok {
			return r, errorf(join(path, req), "is required")
		}
	}
	if len(raw) > len(recordFields) || !allKnown(raw, recordFields) {
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(recordFields, k) {
				return r, errorf(join(path, k), "unknown field")
			}
		}
	}
	for _, k := range recordFields {
		v, ok := raw[k]
		if !ok {
			continue
		}
		fp := join(path, k)
		var err error
		nonNeg := func(dst *int) {
			var n int64
			if n, err = parseInt(fp, v); err == nil {
				if n < 0 {
					err = errorf(fp, "must be non-negative, got %d", n)
				}
				*dst = int(n)
			}
		}
		opt := func(dst **float64) {
			if string(v) == "null" {
				return
			}
			var f float64
			if f, err = parseFloat(fp, v); err == nil {
				*dst = &f
			}
		}
		switch k {
		case "k":
			nonNeg(&r.K)
		case "passes":
			r.Passes, err = parseFloat(fp, v)
		case "time_s":
			r.Time, err = parseFloat(fp, v)
		case "gamma":
			r.Gamma, err = parseFloat(fp, v)
		case "step":
			if err = json.Unmarshal(v, &r.Step); err != nil {
				err = errorf(fp, "must be a string, got %s", rawShort(v))
			} else if r.Step == "" || utf8.RuneCountInString(r.Step) > 64 {
				err = errorf(fp, "must be a step kind (fw, away, drop, …) of 1 to 64 characters")
			}
		case "batch":
			nonNeg(&r.Batch)
		case "active":
			nonNeg(&r.Active)
		case "fw_steps":
			nonNeg(&r.FWSteps)
		case "away_steps":
			nonNeg(&r.AwaySteps)
		case "drops":
			nonNeg(&r.Drops)
		case "cleanups":
			nonNeg(&r.Cleanups)
		case "objective":
			opt(&r.Objective)
		case "gap":
			opt(&r.Gap)
		case "grad_err":
			opt(&r.GradErr)
		case "extra":
			var m map[string]float64
			m, err = extra(fp, v)
			for k, x := range r.Extra { // a slot field read before
				if m == nil {
					m = map[string]float64{}
				}
				m[k] = x
			}
			r.Extra = m
		default:
			err = declared(fp, k, v, &r)
		}
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// declared reads a field declared after the ones above, by its kind.
func declared(fp, name string, v json.RawMessage, r *solver.Record) error {
	f := recordfields.ByJSON(name)
	switch f.Kind {
	case recordfields.Int:
		n, err := parseInt(fp, v)
		f.SetInt(r, int(n))
		return err
	case recordfields.Float:
		x, err := parseFloat(fp, v)
		f.SetFloat(r, x)
		return err
	case recordfields.String:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return errorf(fp, "must be a string, got %s", rawShort(v))
		}
		f.SetStr(r, s)
	case recordfields.OptFloat:
		if string(v) == "null" {
			return nil
		}
		x, err := parseFloat(fp, v)
		if err == nil {
			f.SetOpt(r, x)
		}
		return err
	default:
		return errorf(fp, "a second metrics field is not supported")
	}
	return nil
}

func allKnown(raw map[string]json.RawMessage, known []string) bool {
	for k := range raw {
		if !slices.Contains(known, k) {
			return false
		}
	}
	return true
}

func extra(path string, v json.RawMessage) (map[string]float64, error) {
	if string(v) == "null" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, errorf(path, "must be an object of numbers")
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		x := raw[k]
		if k == "" || utf8.RuneCountInString(k) > 256 {
			return nil, errorf(path, "keys must be 1 to 256 characters")
		}
		f, err := parseFloat(path+"."+k, x)
		if err != nil {
			return nil, err
		}
		out[k] = f
	}
	return out, nil
}

// appendCompact appends m without insignificant white space.
func appendCompact(b []byte, m json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, m); err != nil {
		return b, err
	}
	return append(b, buf.Bytes()...), nil
}
