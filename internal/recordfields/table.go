package recordfields

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/fwlab/fwlab/internal/solver"
)

// Kind is how a field is held and written.
type Kind int

const (
	Int      Kind = iota // int
	Float                // float64
	String               // string
	OptFloat             // *float64: nil when not evaluated (JSON null, an empty CSV cell)
	Metrics              // map[string]float64: problem-specific metrics by name
)

var kindNames = [...]string{"int", "float64", "string", "*float64", "map[string]float64"}

func (k Kind) String() string { return kindNames[k] }

// Field is one field of a record.
type Field struct {
	// Go is the field of solver.Record that holds the value. Empty for a
	// slot field: an OptFloat declared before the struct has a field for
	// it, held in the record's Extra map under its JSON name (the generic
	// slot) and written by every encoding as a field of its own, never
	// among the metrics.
	Go   string
	JSON string // the name in every JSON encoding and the bundle
	CSV  string // the column of both CSV encodings (JSON's name when empty)
	Kind Kind
	// Omit: left out of JSON when zero (Int, Metrics) or nil (OptFloat).
	Omit bool
	// Index: the record's iteration counter, increasing within a trace
	// (the codec stores its difference from the previous record's).
	Index bool
	// Required: a bundle's record must carry it.
	Required bool
	// WallClock: measured by the clock, so a re-run gives another value;
	// `verify` does not compare it, the digest covers it.
	WallClock bool
	// Evaluated: set on evaluated iterations only (a record of a re-run
	// evaluated on a different cadence may lack it).
	Evaluated bool
	// Since is the record codec version that first carries the field (0
	// means 1, the first).
	Since int
	// Produce sets the field on a record as a method reports it, for a
	// field no method of internal/solver sets itself (a slot field);
	// nil for the others.
	Produce func(r *solver.Record)

	off  uintptr // offset in solver.Record (Go != "")
	slot bool
}

// Fields is the declared table with the test build's additions, in JSON
// order. Read it, never change it.
var Fields = build(append(declared[:len(declared):len(declared)], buildExtra...))

// Version is the record codec version this build writes: the highest Since.
var Version = version(Fields)

// Slots are the slot fields (their names are never metrics' names).
var Slots = slots(Fields)

// WallClock is the JSON names of the wall-clock fields.
var WallClock = wallClock(Fields)

// Metrics is the one Metrics field (the record's Extra).
var MetricsField = metrics(Fields)

func build(fs []Field) []Field {
	t := reflect.TypeOf(solver.Record{})
	seen := map[string]bool{}
	metricsAt := -1
	for i := range fs {
		f := &fs[i]
		if f.CSV == "" {
			f.CSV = f.JSON
		}
		if f.Since == 0 {
			f.Since = 1
		}
		if f.JSON == "" || seen[f.JSON] {
			panic(fmt.Sprintf("recordfields: field %d: empty or repeated JSON name %q", i, f.JSON))
		}
		seen[f.JSON] = true
		if f.Kind == Metrics {
			metricsAt = i
		}
		if f.Go == "" {
			if f.Kind != OptFloat || metricsAt < 0 || f.Since < 2 {
				panic(fmt.Sprintf("recordfields: slot field %q: must be an OptFloat after the metrics, added after codec version 1", f.JSON))
			}
			f.slot = true
			continue
		}
		sf, ok := t.FieldByName(f.Go)
		if !ok {
			panic(fmt.Sprintf("recordfields: solver.Record has no field %s (%q)", f.Go, f.JSON))
		}
		if want := goTypes[f.Kind]; sf.Type != want {
			panic(fmt.Sprintf("recordfields: solver.Record.%s is %s, declared %s", f.Go, sf.Type, want))
		}
		if (f.Kind == Float || f.Kind == String) && f.Omit {
			panic(fmt.Sprintf("recordfields: %q: a %s field cannot be omitted", f.JSON, f.Kind))
		}
		f.off = sf.Offset
	}
	if metricsAt < 0 {
		panic("recordfields: no Metrics field")
	}
	return fs
}

var goTypes = [...]reflect.Type{
	Int:      reflect.TypeOf(0),
	Float:    reflect.TypeOf(0.0),
	String:   reflect.TypeOf(""),
	OptFloat: reflect.TypeOf((*float64)(nil)),
	Metrics:  reflect.TypeOf(map[string]float64(nil)),
}

func version(fs []Field) int {
	v := 1
	for _, f := range fs {
		v = max(v, f.Since)
	}
	return v
}

func slots(fs []Field) []*Field {
	var out []*Field
	for i := range fs {
		if fs[i].slot {
			out = append(out, &fs[i])
		}
	}
	return out
}

func wallClock(fs []Field) []string {
	var out []string
	for _, f := range fs {
		if f.WallClock {
			out = append(out, f.JSON)
		}
	}
	return out
}

func metrics(fs []Field) *Field {
	for i := range fs {
		if fs[i].Kind == Metrics {
			return &fs[i]
		}
	}
	return nil
}

// ByJSON returns the field of that JSON name, or nil.
func ByJSON(name string) *Field {
	for i := range Fields {
		if Fields[i].JSON == name {
			return &Fields[i]
		}
	}
	return nil
}

// IsSlot reports whether a metric's name is a slot field's (such a metric
// is written as that field, never among the metrics).
func IsSlot(key string) bool {
	if len(Slots) == 0 {
		return false
	}
	for _, f := range Slots {
		if f.JSON == key {
			return true
		}
	}
	return false
}

// IsSlot reports whether f is held in the record's Extra map.
func (f *Field) IsSlot() bool { return f.slot }

func (f *Field) ptr(r *solver.Record) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(r), f.off) }

// Offset returns the offset in solver.Record of a field held in the struct
// (not a slot field): the record codec reads its fields by offset.
func (f *Field) Offset() uintptr { return f.off }

// Int returns an Int field's value.
func (f *Field) Int(r *solver.Record) int { return *(*int)(f.ptr(r)) }

// SetInt sets an Int field.
func (f *Field) SetInt(r *solver.Record, v int) { *(*int)(f.ptr(r)) = v }

// Float returns a Float field's value.
func (f *Field) Float(r *solver.Record) float64 { return *(*float64)(f.ptr(r)) }

// SetFloat sets a Float field.
func (f *Field) SetFloat(r *solver.Record, v float64) { *(*float64)(f.ptr(r)) = v }

// Str returns a String field's value.
func (f *Field) Str(r *solver.Record) string { return *(*string)(f.ptr(r)) }

// SetStr sets a String field.
func (f *Field) SetStr(r *solver.Record, v string) { *(*string)(f.ptr(r)) = v }

// Opt returns an OptFloat field's value and whether it is set.
func (f *Field) Opt(r *solver.Record) (float64, bool) {
	if f.slot {
		v, ok := r.Extra[f.JSON]
		return v, ok
	}
	p := *(**float64)(f.ptr(r))
	if p == nil {
		return 0, false
	}
	return *p, true
}

// OptPtr returns a struct OptFloat field's pointer (nil for a slot field:
// use Opt).
func (f *Field) OptPtr(r *solver.Record) *float64 {
	if f.slot {
		return nil
	}
	return *(**float64)(f.ptr(r))
}

// SetOptPtr sets a struct OptFloat field's pointer to p (a slot field is
// left alone: use SetOpt).
func (f *Field) SetOptPtr(r *solver.Record, p *float64) {
	if !f.slot {
		*(**float64)(f.ptr(r)) = p
	}
}

// StructOpts are the OptFloat fields held in the struct (pointers), the
// slot fields left out: what a copy of a record must copy besides its
// values and its Extra map.
var StructOpts = func() []*Field {
	var out []*Field
	for i := range Fields {
		if Fields[i].Kind == OptFloat && !Fields[i].slot {
			out = append(out, &Fields[i])
		}
	}
	return out
}()

// SetOpt sets an OptFloat field to v (a fresh pointer, or an entry of the
// record's Extra map for a slot field).
func (f *Field) SetOpt(r *solver.Record, v float64) {
	if f.slot {
		if r.Extra == nil {
			r.Extra = map[string]float64{}
		}
		r.Extra[f.JSON] = v
		return
	}
	*(**float64)(f.ptr(r)) = &v
}

// ClearOpt unsets an OptFloat field.
func (f *Field) ClearOpt(r *solver.Record) {
	if f.slot {
		delete(r.Extra, f.JSON)
		if len(r.Extra) == 0 {
			r.Extra = nil
		}
		return
	}
	*(**float64)(f.ptr(r)) = nil
}

// Map returns the Metrics field's map (the record's Extra, slot fields
// included: skip them with IsSlot).
func (f *Field) Map(r *solver.Record) map[string]float64 { return *(*map[string]float64)(f.ptr(r)) }

// MetricCount is the number of the record's metrics, slot fields left out.
func MetricCount(r *solver.Record) int { return MetricsIn(r.Extra) }

// MetricsIn is the number of metrics in a record's Extra map m: its entries
// but the slot fields'.
func MetricsIn(m map[string]float64) int {
	n := len(m)
	if n == 0 || len(Slots) == 0 {
		return n
	}
	for _, f := range Slots {
		if _, ok := m[f.JSON]; ok {
			n--
		}
	}
	return n
}

// Zero reports whether f holds its zero value (absent from an omitting
// encoding).
func (f *Field) Zero(r *solver.Record) bool {
	switch f.Kind {
	case Int:
		return f.Int(r) == 0
	case Float:
		return f.Float(r) == 0
	case String:
		return f.Str(r) == ""
	case OptFloat:
		_, ok := f.Opt(r)
		return !ok
	}
	return MetricCount(r) == 0
}

// producers are the fields with a producer.
var producers = func() []*Field {
	var out []*Field
	for i := range Fields {
		if Fields[i].Produce != nil {
			out = append(out, &Fields[i])
		}
	}
	return out
}()

// Produced returns m, reporting records with the fields their producers
// set: m itself when no field has a producer.
func Produced(m solver.Method) solver.Method {
	if len(producers) == 0 || m == nil {
		return m
	}
	return produced{m}
}

type produced struct{ m solver.Method }

func (p produced) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	return p.m.Run(ctx, producing{rec})
}

// producing sets the produced fields of each record before rec gets it,
// and passes on rec's requests for an evaluation (solver.EvalRequester).
type producing struct{ rec solver.Recorder }

func (p producing) Record(r solver.Record) {
	for _, f := range producers {
		f.Produce(&r)
	}
	p.rec.Record(r)
}

func (p producing) EvalNext() bool { return solver.EvalRequested(p.rec) }
