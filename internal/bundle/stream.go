package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// The decoder reads a bundle as a stream: the records of each trace go to
// a sink a chunk at a time (memory for Decode, a store for Import), so
// that what it holds is bounded by the largest single value (a panel, the
// spec, a record), never by the number of records.

// chunkRecords is how many records the decoder hands a sink at once.
const chunkRecords = 4096

// sink receives the traces of a bundle as they are read.
type sink interface {
	beginTrace(i int) error
	// records takes b (the sink's from then on) and returns an empty
	// batch to fill next (nil: a new one)
	records(i int, b *recordBatch) (*recordBatch, error)
	endTrace(i int, t *Trace) error // t without its Records
}

// memSink keeps everything (Decode).
type memSink struct{ traces []Trace }

func (m *memSink) beginTrace(int) error { m.traces = append(m.traces, Trace{}); return nil }

func (m *memSink) records(i int, b *recordBatch) (*recordBatch, error) {
	m.traces[i].Records = append(m.traces[i].Records, b.recs...)
	b.reset()
	return b, nil
}

// recordBatch is a chunk of a trace's records on its way to a sink: read
// by the reader as JSON (shaped, their text in forms.text), then by the
// converter into recs (see convert.go).
type recordBatch struct {
	recs  []solver.Record
	forms numberForms // their text, and their numbers read in the encoder's form (kept by Import)

	shaped    []shapedRecord
	later     []laterKV // the shaped records' later fields (spans in forms.text)
	checkOnly bool      // the reader failed after these: read them for an earlier failure, keep none
}

func (b *recordBatch) reset() {
	clear(b.recs)
	b.recs = b.recs[:0]
	b.forms.reset()
	b.shaped, b.later, b.checkOnly = b.shaped[:0], b.later[:0], false
}

func (m *memSink) endTrace(i int, t *Trace) error {
	recs := m.traces[i].Records
	m.traces[i] = *t
	m.traces[i].Records = recs
	return nil
}

type decoder struct {
	dec  *json.Decoder
	src  *boundedReader
	in   *replay // what dec reads: src, after what the scanner left
	base int64   // the document's offset of dec's input
	scan scanner // reads the records
	sink sink
	b    *Bundle // the fields read so far (its Traces stay empty)

	formatSeen bool
	specRaw    json.RawMessage
	sp         *spec.Run // the normalised spec, once checked
	metas      []traceMeta
	conv       scanner        // the converter's: reads the records' fields
	spare      []*recordBatch // batches to fill, kept from the trace before

	// keepForms keeps the numbers read in the encoder's form (Import's
	// digest copies them).
	keepForms bool

	// skipAggregates reads "aggregates" without keeping it (Import).
	skipAggregates bool
}

func newDecoder(r io.Reader, s sink) *decoder {
	src := &boundedReader{r: r, limit: -1}
	in := &replay{r: src}
	return &decoder{dec: json.NewDecoder(in), src: src, in: in, sink: s, b: &Bundle{}}
}

func (d *decoder) bundle() (*Bundle, error) {
	if err := d.delim("", '{'); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	version := 0
	last := ""
	var infoRaw json.RawMessage
	for {
		k, ok, err := d.key("")
		if err != nil {
			var be *Error
			if last != "" && errors.As(err, &be) && be.Path == "" {
				be.Msg += fmt.Sprintf(" (after the field %s)", last)
			}
			return nil, err
		}
		last = k
		if !ok {
			break
		}
		if seen[k] {
			return nil, errorf(k, "appears twice")
		}
		seen[k] = true
		if err := d.field(k, &version, &infoRaw); err != nil {
			return nil, err
		}
	}
	return d.end(seen, infoRaw)
}

// field reads the bundle's field k; version is the format version once
// read, infoRaw the instance's description, checked at the end.
func (d *decoder) field(k string, version *int, infoRaw *json.RawMessage) error {
	b := d.b
	var err error
	switch k {
	case "format":
		s, err := d.string(k)
		if err != nil {
			return err
		}
		if s != Format {
			return errorf(k, "must be %q, got %s", Format, quoteShort(s))
		}
		d.formatSeen = true
	case "format_version":
		v, err := d.int(k)
		if err != nil {
			return err
		}
		if v < 1 || v > FormatVersion {
			return errorf(k, "must be between 1 and %d (this fwlab's), got %d: a newer fwlab wrote it", FormatVersion, v)
		}
		*version = int(v)
	case "version", "status", "name", "note", "created", "ended":
		err = d.header(k)
	case "spec":
		// checked once the document is known to be a bundle
		d.specRaw, err = d.raw(k)
	case "info":
		*infoRaw, err = d.rawMax(k, MaxPanelBytes+64<<10)
	case "traces":
		err = d.traces()
	case "aggregates":
		if d.skipAggregates {
			err = d.skip(k)
		} else {
			b.Aggregates, err = d.rawMax(k, -1)
		}
	case "digest":
		s, err := d.string(k)
		if err != nil {
			return err
		}
		if !validDigest(s) {
			return errorf(k, "must be %q followed by 64 lower-case hexadecimal digits, got %s", DigestPrefix, quoteShort(s))
		}
		b.Digest = s
	default:
		if *version == 0 {
			return errorf(k, "unknown field (is this a fwlab bundle of a newer format version?)")
		}
		return errorf(k, "unknown field")
	}
	return err
}

// end checks the bundle once its closing brace is read: the required
// fields, the spec, the instance's description, nothing after it.
func (d *decoder) end(seen map[string]bool, infoRaw json.RawMessage) (*Bundle, error) {
	b := d.b
	if !seen["format"] {
		return nil, errorf("format", "is required: this is not a fwlab bundle (%q)", Format)
	}
	for _, req := range []string{"format_version", "version", "spec", "info", "traces"} {
		if !seen[req] {
			return nil, errorf(req, "is required")
		}
	}
	if err := d.parseSpec(); err != nil {
		return nil, err
	}
	if err := d.info(infoRaw, &b.Info); err != nil {
		return nil, err
	}
	d.src.arm(MaxValueBytes)
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, errorf("", "data after the bundle's closing brace")
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return b, nil
}

// header reads one of the bundle's string fields.
func (d *decoder) header(k string) error {
	s, err := d.string(k)
	if err != nil {
		return err
	}
	b := d.b
	switch k {
	case "version":
		b.Version = s
	case "status":
		b.Status = s
	case "name":
		b.Name = s
	case "note":
		b.Note = s
	case "created":
		b.Created, err = parseTime(k, s)
	case "ended":
		b.Ended, err = parseTime(k, s)
	}
	return err
}

// parseSpec checks the spec (once): strictly decoded into the bundle,
// normalised into d.sp.
func (d *decoder) parseSpec() error {
	if d.sp != nil {
		return nil
	}
	if err := strict("spec", d.specRaw, &d.b.Spec); err != nil {
		return err
	}
	sp := d.b.Spec
	sp.Algorithms = append([]spec.Algo(nil), d.b.Spec.Algorithms...)
	if err := sp.Normalize(); err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			return errorf(join("spec", fe.Field), "%s", fe.Msg)
		}
		return errorf("spec", "%v", err)
	}
	d.sp = &sp
	return nil
}

// skip reads the next value without keeping it.
func (d *decoder) skip(path string) error {
	depth := 0
	for {
		t, err := d.token(path)
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

func (d *decoder) info(m json.RawMessage, in *Info) error {
	var raw struct {
		Dim     *int            `json:"dim"`
		Samples *int            `json:"samples"`
		Blocks  *int            `json:"blocks"`
		FStar   json.RawMessage `json:"fstar"`
		Panels  json.RawMessage `json:"panels"`
	}
	if err := strict("info", m, &raw); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *int
		dst  *int
	}{{"dim", raw.Dim, &in.Dim}, {"samples", raw.Samples, &in.Samples}, {"blocks", raw.Blocks, &in.Blocks}} {
		if f.v == nil {
			return errorf("info."+f.name, "is required")
		}
		if *f.v < 0 {
			return errorf("info."+f.name, "must be non-negative, got %d", *f.v)
		}
		*f.dst = *f.v
	}
	if raw.FStar != nil && string(raw.FStar) != "null" {
		v, err := parseFloat("info.fstar", raw.FStar)
		if err != nil {
			return err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			// no store keeps it: a page could not read the run
			return errorf("info.fstar", "must be a finite number (the optimal value) or absent, got %s", rawShort(raw.FStar))
		}
		in.FStar = &v
	}
	if raw.Panels != nil && string(raw.Panels) != "null" {
		if err := checkPanel("info.panels", raw.Panels); err != nil {
			return err
		}
		in.Panels = raw.Panels
	}
	return nil
}

// checkPanel applies the rules of a panel: an object of at most
// MaxPanelBytes whose graph ("edges" [{m, l, r}] or [[a, b, w]],
// "components" [[node]])
// names nodes below the panel's own size in bytes (a panel cannot
// describe more nodes than it has bytes).
func checkPanel(path string, m json.RawMessage) error {
	if len(m) == 0 || m[0] != '{' {
		return errorf(path, "must be an object")
	}
	if len(m) > MaxPanelBytes {
		return errorf(path, "must be at most %s, got %d bytes", sizeName(MaxPanelBytes), len(m))
	}
	var p struct {
		Edges      json.RawMessage `json:"edges"`
		Components json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(m, &p); err != nil {
		return errorf(path, "must be an object")
	}
	limit := int64(len(m))
	node := func(fp string, v any) error {
		f, ok := v.(float64)
		if !ok {
			return nil // not a node id: the page ignores it
		}
		if f != float64(int64(f)) || f < 0 || int64(f) >= limit {
			return errorf(fp, "a node id must be an integer from 0 to %d (below the panel's size in bytes), got %g", limit-1, f)
		}
		return nil
	}
	if len(p.Edges) > 0 && p.Edges[0] == '[' {
		// as the page reads them: [a, b, w] or {m|from, l|to, r|w}
		var edges []any
		if err := json.Unmarshal(p.Edges, &edges); err != nil {
			return errorf(path+".edges", "must be an array")
		}
		for i, e := range edges {
			switch e := e.(type) {
			case []any:
				for j := 0; j < min(2, len(e)); j++ {
					if err := node(fmt.Sprintf("%s.edges[%d][%d]", path, i, j), e[j]); err != nil {
						return err
					}
				}
			case map[string]any:
				for _, k := range []string{"m", "l", "from", "to"} {
					if err := node(fmt.Sprintf("%s.edges[%d].%s", path, i, k), e[k]); err != nil {
						return err
					}
				}
			}
		}
	}
	if len(p.Components) > 0 && p.Components[0] == '[' {
		var comps [][]any
		if err := json.Unmarshal(p.Components, &comps); err != nil {
			return errorf(path+".components", "must be an array of arrays of node ids")
		}
		for i, c := range comps {
			for j, v := range c {
				if err := node(fmt.Sprintf("%s.components[%d][%d]", path, i, j), v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// check applies the rules that span fields: the run's status is known,
// every trace belongs to one of the spec's algorithms and replications,
// each (algorithm, replication) at most as often as the spec lists the
// algorithm, and no record's k is beyond the spec's iters.
func (d *decoder) check() error {
	b, sp := d.b, d.sp
	if b.Status != "" && !slices.Contains(store.Statuses, b.Status) {
		return errorf("status", "must be one of %s, got %s", strings.Join(store.Statuses, ", "), quoteShort(b.Status))
	}
	algos := map[string]int{}
	for _, a := range sp.Algorithms {
		algos[a.Algo]++
	}
	type key struct {
		algo string
		rep  int
	}
	seen := map[key][]int{}
	for i, m := range d.metas {
		p := fmt.Sprintf("traces[%d]", i)
		// a trace is named by its algorithm, with what a variant changes
		// after " + " (for instance "bc-ssfw-as + slack collapse")
		base, _, _ := strings.Cut(m.algo, " + ")
		if algos[base] == 0 {
			return errorf(p+".algo", "must be one of the spec's algorithms (with a variant after \" + \"), got %s", quoteShort(m.algo))
		}
		if m.replication < 0 || m.replication >= sp.Replications {
			return errorf(p+".replication", "must be between 0 and %d (the spec's replications − 1), got %d", sp.Replications-1, m.replication)
		}
		k := key{base, m.replication}
		if prev := seen[k]; len(prev) >= algos[base] {
			return errorf(p, "duplicates traces[%d] (algo %s, replication %d): the spec lists %s %d time(s), so a bundle has at most that many such traces",
				prev[0], quoteShort(m.algo), m.replication, quoteShort(base), algos[base])
		}
		seen[k] = append(seen[k], i)
		if !m.checkedK && m.n > 0 && m.lastK > sp.Iters {
			return errorf(fmt.Sprintf("%s.records[%d].k", p, m.n-1), "must be at most the spec's iters (%d), got %d", sp.Iters, m.lastK)
		}
	}
	return nil
}
