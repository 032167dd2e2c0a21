package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"unsafe"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// A batch of records is stored as one blob, self-contained so that any batch
// decodes alone. Its layout follows the record's declaration
// (internal/recordfields); for codec version 1:
//
//	byte     codec version
//	uvarint  number of strings, then each as uvarint length + bytes: the
//	         step kinds and extra keys the batch uses, in first-use order
//	uvarint  number of records, then each record:
//	  uvarint  flags (which optional fields follow: bit i for the i-th
//	           optional field below)
//	  varint   k − previous k (the first record: k − 0)
//	  uvarint  step (index into the strings)
//	  float    passes, time_s, gamma
//	  varint   batch, active
//	  varint   fw_steps, away_steps, drops, cleanups when flagged
//	  float    objective, gap, grad_err when flagged
//	  uvarint  extra count, then (uvarint key index, float) in key order
//
// that is, version 1's fields by group (the index, strings, floats, ints,
// optional ints, optional floats, the metrics), each group in declaration
// order; a field added later (a higher Since) follows them, in declaration
// order, flagged when optional, and raises the codec version
// (docs/compatibility.md). A blob is read by the fields of its own version.
//
// Integers are zig-zag varints (one byte for the usual small values). A
// float is its IEEE 754 bits, stored either as they are or XORed with the
// previous value of its column in the batch (each extra key is a column),
// with zero bytes at either end dropped (appendF64): 1 to 9 bytes. A decoded
// record is bit-identical to the appended one, NaN payloads included. The only normalisation: an empty, non-nil Extra map
// decodes as nil (the two mean the same in every encoding fwlab writes).
var codecVersion = recordfields.Version

// codecField is one field in the codec's order.
type codecField struct {
	f      *recordfields.Field
	kind   recordfields.Kind // f's (kept here, read for every record)
	index  bool              // f.Index
	slot   bool              // f is held in the Extra map
	off    uintptr           // f's offset in the record (not a slot)
	flag   uint64            // its flag bit, 0 when always written
	column int               // its float column (Float, OptFloat)
}

// codecPlan is the layout of one codec version.
type codecPlan struct {
	fields  []codecField
	strs    []*recordfields.Field // the String fields
	flagged []codecField          // the fields with a flag bit
	columns int                   // float columns
	all     uint64                // every flag bit
}

// plans holds the plan of every version this build reads, by version.
var plans = func() []codecPlan {
	out := make([]codecPlan, recordfields.Version+1)
	for v := 1; v <= recordfields.Version; v++ {
		out[v] = planFor(v)
	}
	return out
}()

func planFor(v int) codecPlan {
	var p codecPlan
	add := func(f *recordfields.Field) {
		c := codecField{f: f, kind: f.Kind, index: f.Index, slot: f.IsSlot(), column: -1}
		if !c.slot && f.Kind != recordfields.Metrics {
			c.off = f.Offset()
		}
		if f.Kind == recordfields.OptFloat || f.Kind == recordfields.Metrics || f.Kind == recordfields.Int && f.Omit {
			c.flag = 1 << bits.OnesCount64(p.all)
			p.all |= c.flag
		}
		if f.Kind == recordfields.Float || f.Kind == recordfields.OptFloat {
			c.column = p.columns
			p.columns++
		}
		p.fields = append(p.fields, c)
		if f.Kind == recordfields.String {
			p.strs = append(p.strs, f)
		}
		if c.flag != 0 {
			p.flagged = append(p.flagged, c)
		}
	}
	first := []func(f *recordfields.Field) bool{
		func(f *recordfields.Field) bool { return f.Index },
		func(f *recordfields.Field) bool { return f.Kind == recordfields.String },
		func(f *recordfields.Field) bool { return f.Kind == recordfields.Float },
		func(f *recordfields.Field) bool { return f.Kind == recordfields.Int && !f.Index && !f.Omit },
		func(f *recordfields.Field) bool { return f.Kind == recordfields.Int && !f.Index && f.Omit },
		func(f *recordfields.Field) bool { return f.Kind == recordfields.OptFloat },
		func(f *recordfields.Field) bool { return f.Kind == recordfields.Metrics },
	}
	for _, in := range first {
		for i := range recordfields.Fields {
			if f := &recordfields.Fields[i]; f.Since == 1 && in(f) {
				add(f)
			}
		}
	}
	for i := range recordfields.Fields {
		if f := &recordfields.Fields[i]; f.Since > 1 && f.Since <= v {
			add(f)
		}
	}
	return p
}

// encodeBatch appends the blob of recs to b.
func encodeBatch(b []byte, recs []solver.Record) []byte {
	e := BatchEncoder{body: make([]byte, 0, 32*len(recs))}
	for i := range recs {
		e.Add(&recs[i])
	}
	return e.AppendBlob(b)
}

// Batch is an encoded batch: N records in the blob a BatchEncoder wrote.
type Batch struct {
	N    int
	Blob []byte
}

// BatchRecords is the number of records in bs.
func BatchRecords(bs []Batch) int {
	n := 0
	for _, b := range bs {
		n += b.N
	}
	return n
}

// BatchEncoder encodes a batch one record at a time, as the records come:
// the Appender encodes each record as it is added, and keeps no record. It
// runs for every record a run stores, so it avoids per-record hashing where
// it can: a record's strings are looked up first among the batch's few,
// and a record whose metrics have the keys of the record before it reuses
// that record's sorted keys. The blob is the one encodeBatch writes of the
// same records: strings are numbered in first-use order either way.
type BatchEncoder struct {
	in        interner
	body      []byte // the records, encoded
	n         int
	prevK     int
	prev      []uint64 // by float column
	prevExtra []uint64 // by string index (the metric keys')
	last      keySet   // the last record's metric keys
	haveLast  bool
}

// Len returns the number of records added since the last AppendBlob.
func (e *BatchEncoder) Len() int { return e.n }

// AppendBlob appends the blob of the records added since the last call to
// b, and starts a new batch.
func (e *BatchEncoder) AppendBlob(b []byte) []byte {
	b = append(b, byte(codecVersion))
	b = binary.AppendUvarint(b, uint64(len(e.in.strs)))
	for _, s := range e.in.strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(e.n))
	b = append(b, e.body...)
	e.reset()
	return b
}

// reset starts a new batch, keeping the buffers.
func (e *BatchEncoder) reset() {
	clear(e.in.strs) // the strings are the records'; let them go
	e.in.strs, e.in.index, e.in.last = e.in.strs[:0], nil, 0
	e.body, e.n, e.prevK = e.body[:0], 0, 0
	clear(e.prev)
	e.prevExtra = e.prevExtra[:0]
	e.last, e.haveLast = keySet{}, false
}

// Add encodes r.
func (e *BatchEncoder) Add(r *solver.Record) {
	plan := &plans[codecVersion]
	if e.prev == nil {
		e.prev = make([]uint64, plan.columns)
	}
	for _, f := range plan.strs {
		e.in.add(f.Str(r))
	}
	if recordfields.MetricCount(r) > 0 && (!e.haveLast || !e.last.same(r.Extra)) {
		e.last = e.keysOf(r.Extra)
		e.haveLast = true
	}
	for len(e.prevExtra) < len(e.in.strs) {
		e.prevExtra = append(e.prevExtra, 0)
	}
	e.body = e.appendRecord(e.body, plan, r)
	e.n++
}

// keysOf returns m's metric keys, sorted, numbered in the batch's strings.
func (e *BatchEncoder) keysOf(m map[string]float64) keySet {
	var ks keySet
	for k := range m {
		if !recordfields.IsSlot(k) {
			ks.keys = append(ks.keys, k)
		}
	}
	sort.Strings(ks.keys)
	for _, k := range ks.keys {
		ks.idx = append(ks.idx, e.in.add(k))
	}
	return ks
}

// appendRecord writes r: its flags, then its fields in the codec's order,
// each read at its offset in the record.
func (e *BatchEncoder) appendRecord(b []byte, plan *codecPlan, r *solver.Record) []byte {
	p := unsafe.Pointer(r)
	var flags uint64
	for j := range plan.flagged {
		c := &plan.flagged[j]
		var set bool
		switch {
		case c.kind == recordfields.Int:
			set = *(*int)(unsafe.Add(p, c.off)) != 0
		case c.kind == recordfields.OptFloat && !c.slot:
			set = *(**float64)(unsafe.Add(p, c.off)) != nil
		default:
			set = !c.f.Zero(r)
		}
		if set {
			flags |= c.flag
		}
	}
	b = binary.AppendUvarint(b, flags)
	for j := range plan.fields {
		c := &plan.fields[j]
		switch c.kind {
		case recordfields.Int:
			v := *(*int)(unsafe.Add(p, c.off))
			switch {
			case c.index:
				b = binary.AppendVarint(b, int64(v)-int64(e.prevK))
				e.prevK = v
			case c.flag == 0 || flags&c.flag != 0:
				b = binary.AppendVarint(b, int64(v))
			}
		case recordfields.String:
			b = binary.AppendUvarint(b, uint64(e.in.find(*(*string)(unsafe.Add(p, c.off)))))
		case recordfields.Float:
			b = appendF64(b, *(*float64)(unsafe.Add(p, c.off)), &e.prev[c.column])
		case recordfields.OptFloat:
			if flags&c.flag == 0 {
				continue
			}
			var v float64
			if c.slot {
				v, _ = c.f.Opt(r)
			} else {
				v = **(**float64)(unsafe.Add(p, c.off))
			}
			b = appendF64(b, v, &e.prev[c.column])
		case recordfields.Metrics:
			if flags&c.flag == 0 {
				continue
			}
			ks := &e.last
			b = binary.AppendUvarint(b, uint64(len(ks.keys)))
			for j, k := range ks.keys {
				ki := ks.idx[j]
				b = binary.AppendUvarint(b, uint64(ki))
				b = appendF64(b, r.Extra[k], &e.prevExtra[ki])
			}
		}
	}
	return b
}

// keySet is the sorted metric keys of a record and their string indices.
type keySet struct {
	keys []string
	idx  []int
}

// same reports whether m's metrics have exactly the set's keys.
func (ks *keySet) same(m map[string]float64) bool {
	if recordfields.MetricsIn(m) != len(ks.keys) {
		return false
	}
	for _, k := range ks.keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// interner numbers a batch's strings in first-use order. A batch holds a
// few (the step kinds, the metric keys): they are searched in a list, the
// last one found first, and only a batch with many goes through a map.
type interner struct {
	strs  []string
	index map[string]int // once there are more than interned strings
	last  int
}

const internList = 16

// add returns s's index, numbering it if it is new.
func (in *interner) add(s string) int {
	if i := in.find(s); i >= 0 {
		return i
	}
	in.strs = append(in.strs, s)
	i := len(in.strs) - 1
	if in.index != nil {
		in.index[s] = i
	} else if len(in.strs) > internList {
		in.index = make(map[string]int, 2*len(in.strs))
		for j, t := range in.strs {
			in.index[t] = j
		}
	}
	in.last = i
	return i
}

// find returns s's index, or -1.
func (in *interner) find(s string) int {
	if in.last < len(in.strs) && in.strs[in.last] == s {
		return in.last
	}
	if in.index != nil {
		if i, ok := in.index[s]; ok {
			in.last = i
			return i
		}
		return -1
	}
	for i, t := range in.strs {
		if t == s {
			in.last = i
			return i
		}
	}
	return -1
}

// appendF64 appends f's bits, either as they are or XORed with the column's
// previous value (*prev), whichever has fewer significant bytes: a header
// byte (bit 7: XORed; bits 4–6: leading zero bytes dropped; bits 0–3:
// trailing zero bytes dropped) and the bytes between, least significant
// first. A repeated value takes one byte, a value that changes only in its
// low mantissa bits a few.
func appendF64(b []byte, f float64, prev *uint64) []byte {
	v := math.Float64bits(f)
	xr := v ^ *prev
	*prev = v
	x, mode := v, byte(0)
	lead, trail := zeroBytes(v)
	if l, t := zeroBytes(xr); l+t > lead+trail {
		x, mode, lead, trail = xr, 0x80, l, t
	}
	b = append(b, mode|byte(lead)<<4|byte(trail))
	if trail == 8 {
		return b
	}
	// all eight bytes from the first kept one, then the leading zero bytes cut
	b = binary.LittleEndian.AppendUint64(b, x>>(8*trail))
	return b[:len(b)-lead-trail]
}

// zeroBytes returns the leading (at most 7) and trailing zero bytes of x;
// for x = 0, (0, 8).
func zeroBytes(x uint64) (lead, trail int) {
	if x == 0 {
		return 0, 8
	}
	return min(7, bits.LeadingZeros64(x)/8), bits.TrailingZeros64(x) / 8
}

// errCorrupt is wrapped by every decoding failure.
var errCorrupt = errors.New("corrupt record batch")

// decoder reads a blob, remembering the first failure.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, what)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int(what string) int {
	v := d.varint(what)
	if int64(int(v)) != v {
		d.fail(what + " out of range")
		return 0
	}
	return int(v)
}

// f64 reads a float written by appendF64 with the column's previous bits.
func (d *decoder) f64(what string, prev *uint64) float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.fail(what)
		return 0
	}
	h := d.b[0]
	lead, trail := int(h>>4&7), int(h&15)
	n := 8 - lead - trail
	if trail > 8 || n < 0 || (trail == 8 && lead != 0) {
		d.fail(what + " header")
		return 0
	}
	if len(d.b) < 1+n {
		d.fail(what)
		return 0
	}
	var x uint64
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(d.b[1+i])
	}
	d.b = d.b[1+n:]
	x <<= 8 * trail
	if h&0x80 != 0 {
		x ^= *prev
	}
	*prev = x
	return math.Float64frombits(x)
}

// count reads a length that must fit in the rest of the blob (each element
// takes at least min bytes), so that a corrupt count cannot make the decoder
// allocate without bound.
func (d *decoder) count(what string, min int) int {
	v := d.uvarint(what)
	if d.err == nil && v > uint64(len(d.b)/min) {
		d.fail(what + " exceeds the data")
		return 0
	}
	return int(v)
}

// ErrNewerCodec is wrapped by the error of a batch written by a newer
// fwlab, whose codec version this one does not read.
var ErrNewerCodec = errors.New("record batch written by a newer fwlab")

// decodeBatch appends the records of one blob to out.
func decodeBatch(out []solver.Record, blob []byte) ([]solver.Record, error) {
	if len(blob) == 0 {
		return out, fmt.Errorf("%w: empty", errCorrupt)
	}
	if v := int(blob[0]); v == 0 || v > codecVersion {
		if v > codecVersion {
			return out, fmt.Errorf("%w: its record codec is version %d, this fwlab reads versions 1 to %d: upgrade this fwlab to read it (docs/compatibility.md)", ErrNewerCodec, v, codecVersion)
		}
		return out, fmt.Errorf("%w: codec version %d (this fwlab reads 1 to %d)", errCorrupt, v, codecVersion)
	}
	plan := &plans[blob[0]]
	d := &decoder{b: blob[1:]}
	strs := make([]string, d.count("string count", 1))
	for i := range strs {
		n := d.count("string length", 1)
		if d.err != nil {
			break
		}
		strs[i] = string(d.b[:n])
		d.b = d.b[n:]
	}
	str := func(what string) string {
		i := d.uvarint(what)
		if d.err == nil && i >= uint64(len(strs)) {
			d.fail(what + " index out of range")
		}
		if d.err != nil {
			return ""
		}
		return strs[i]
	}
	n := d.count("record count", 8)
	k := 0
	var small [8]uint64
	prev := small[:0]
	for range plan.columns {
		prev = append(prev, 0)
	}
	prevExtra := map[int]uint64{}
	for i := 0; i < n && d.err == nil; i++ {
		var r solver.Record
		flags := d.uvarint("flags")
		if flags&^plan.all != 0 {
			d.fail("unknown flags")
		}
		for _, c := range plan.fields {
			f := c.f
			switch f.Kind {
			case recordfields.Int:
				switch {
				case f.Index:
					k += int(d.varint(f.JSON))
					f.SetInt(&r, k)
				case c.flag == 0 || flags&c.flag != 0:
					f.SetInt(&r, d.int(f.JSON))
				}
			case recordfields.String:
				f.SetStr(&r, str(f.JSON))
			case recordfields.Float:
				f.SetFloat(&r, d.f64(f.JSON, &prev[c.column]))
			case recordfields.OptFloat:
				if flags&c.flag != 0 {
					f.SetOpt(&r, d.f64(f.JSON, &prev[c.column]))
				}
			case recordfields.Metrics:
				if flags&c.flag == 0 {
					continue
				}
				m := d.count("extra count", 2)
				r.Extra = make(map[string]float64, m)
				for j := 0; j < m && d.err == nil; j++ {
					u := d.uvarint("extra key")
					if d.err == nil && u >= uint64(len(strs)) {
						d.fail("extra key index out of range")
					}
					if d.err != nil {
						break
					}
					ki := int(u)
					p := prevExtra[ki]
					r.Extra[strs[ki]] = d.f64("extra value", &p)
					prevExtra[ki] = p
				}
			}
		}
		if d.err == nil {
			out = append(out, r)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return out, d.err
}
