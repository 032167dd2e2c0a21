package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"github.com/fwlab/fwlab/internal/solver"
)

// A batch of records is stored as one blob, self-contained so that any batch
// decodes alone:
//
//	byte     codec version (1)
//	uvarint  number of strings, then each as uvarint length + bytes: the
//	         step kinds and extra keys the batch uses, in first-use order
//	uvarint  number of records, then each record:
//	  uvarint  flags (which optional fields follow, see the flag constants)
//	  varint   k − previous k (the first record: k − 0)
//	  uvarint  step (index into the strings)
//	  float    passes, time_s, gamma
//	  varint   batch, active
//	  varint   fw_steps, away_steps, drops, cleanups when flagged
//	  float    objective, gap, grad_err when flagged
//	  uvarint  extra count, then (uvarint key index, float) in key order
//
// Integers are zig-zag varints (one byte for the usual small values). A
// float is its IEEE 754 bits, stored either as they are or XORed with the
// previous value of its column in the batch (each extra key is a column),
// with zero bytes at either end dropped (appendF64): 1 to 9 bytes. A decoded
// record is bit-identical to the appended one, NaN payloads included. The only normalisation: an empty, non-nil Extra map
// decodes as nil (the two mean the same in every encoding fwlab writes).
const codecVersion = 1

const (
	flagFW = 1 << iota
	flagAway
	flagDrops
	flagCleanups
	flagObjective
	flagGap
	flagGradErr
	flagExtra
	flagAll = flagExtra<<1 - 1
)

// encodeBatch appends the blob of recs to b.
func encodeBatch(b []byte, recs []solver.Record) []byte {
	index := map[string]int{}
	var strs []string
	intern := func(s string) {
		if _, ok := index[s]; !ok {
			index[s] = len(strs)
			strs = append(strs, s)
		}
	}
	var keys []string
	for i := range recs {
		intern(recs[i].Step)
		for k := range recs[i].Extra {
			keys = append(keys, k)
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			for _, k := range keys {
				intern(k)
			}
			keys = keys[:0]
		}
	}
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(strs)))
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(recs)))
	prevK := 0
	var prev [6]uint64            // passes, time, gamma, objective, gap, grad_err
	prevExtra := map[int]uint64{} // by key index
	for i := range recs {
		r := &recs[i]
		var flags uint64
		if r.FWSteps != 0 {
			flags |= flagFW
		}
		if r.AwaySteps != 0 {
			flags |= flagAway
		}
		if r.Drops != 0 {
			flags |= flagDrops
		}
		if r.Cleanups != 0 {
			flags |= flagCleanups
		}
		if r.Objective != nil {
			flags |= flagObjective
		}
		if r.Gap != nil {
			flags |= flagGap
		}
		if r.GradErr != nil {
			flags |= flagGradErr
		}
		if len(r.Extra) > 0 {
			flags |= flagExtra
		}
		b = binary.AppendUvarint(b, flags)
		b = binary.AppendVarint(b, int64(r.K)-int64(prevK))
		prevK = r.K
		b = binary.AppendUvarint(b, uint64(index[r.Step]))
		b = appendF64(b, r.Passes, &prev[0])
		b = appendF64(b, r.Time, &prev[1])
		b = appendF64(b, r.Gamma, &prev[2])
		b = binary.AppendVarint(b, int64(r.Batch))
		b = binary.AppendVarint(b, int64(r.Active))
		for _, c := range [...]struct {
			flag uint64
			v    int
		}{{flagFW, r.FWSteps}, {flagAway, r.AwaySteps}, {flagDrops, r.Drops}, {flagCleanups, r.Cleanups}} {
			if flags&c.flag != 0 {
				b = binary.AppendVarint(b, int64(c.v))
			}
		}
		for j, p := range [...]*float64{r.Objective, r.Gap, r.GradErr} {
			if p != nil {
				b = appendF64(b, *p, &prev[3+j])
			}
		}
		if flags&flagExtra != 0 {
			keys = keys[:0]
			for k := range r.Extra {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b = binary.AppendUvarint(b, uint64(len(keys)))
			for _, k := range keys {
				ki := index[k]
				b = binary.AppendUvarint(b, uint64(ki))
				p := prevExtra[ki]
				b = appendF64(b, r.Extra[k], &p)
				prevExtra[ki] = p
			}
		}
	}
	return b
}

// appendF64 appends f's bits, either as they are or XORed with the column's
// previous value (*prev), whichever has fewer significant bytes: a header
// byte (bit 7: XORed; bits 4–6: leading zero bytes dropped; bits 0–3:
// trailing zero bytes dropped) and the bytes between, least significant
// first. A repeated value takes one byte, a value that changes only in its
// low mantissa bits a few.
func appendF64(b []byte, f float64, prev *uint64) []byte {
	v := math.Float64bits(f)
	x, mode := v, byte(0)
	if xr := v ^ *prev; sigBytes(xr) < sigBytes(v) {
		x, mode = xr, 0x80
	}
	*prev = v
	lead, trail := zeroBytes(x)
	b = append(b, mode|byte(lead)<<4|byte(trail))
	x >>= 8 * trail
	for i := 0; i < 8-lead-trail; i++ {
		b = append(b, byte(x))
		x >>= 8
	}
	return b
}

// zeroBytes returns the leading (at most 7) and trailing zero bytes of x;
// for x = 0, (0, 8).
func zeroBytes(x uint64) (lead, trail int) {
	if x == 0 {
		return 0, 8
	}
	return min(7, bits.LeadingZeros64(x)/8), bits.TrailingZeros64(x) / 8
}

func sigBytes(x uint64) int {
	lead, trail := zeroBytes(x)
	return 8 - lead - trail
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

// decodeBatch appends the records of one blob to out.
func decodeBatch(out []solver.Record, blob []byte) ([]solver.Record, error) {
	if len(blob) == 0 || blob[0] != codecVersion {
		if len(blob) == 0 {
			return out, fmt.Errorf("%w: empty", errCorrupt)
		}
		return out, fmt.Errorf("%w: codec version %d (this fwlab reads %d)", errCorrupt, blob[0], codecVersion)
	}
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
	var prev [6]uint64
	prevExtra := map[int]uint64{}
	for i := 0; i < n && d.err == nil; i++ {
		var r solver.Record
		flags := d.uvarint("flags")
		if flags&^flagAll != 0 {
			d.fail("unknown flags")
		}
		dk := d.varint("k")
		k += int(dk)
		r.K = k
		r.Step = str("step")
		r.Passes = d.f64("passes", &prev[0])
		r.Time = d.f64("time_s", &prev[1])
		r.Gamma = d.f64("gamma", &prev[2])
		r.Batch = d.int("batch")
		r.Active = d.int("active")
		for _, c := range [...]struct {
			flag uint64
			dst  *int
			name string
		}{{flagFW, &r.FWSteps, "fw_steps"}, {flagAway, &r.AwaySteps, "away_steps"}, {flagDrops, &r.Drops, "drops"}, {flagCleanups, &r.Cleanups, "cleanups"}} {
			if flags&c.flag != 0 {
				*c.dst = d.int(c.name)
			}
		}
		for j, c := range [...]struct {
			flag uint64
			dst  **float64
			name string
		}{{flagObjective, &r.Objective, "objective"}, {flagGap, &r.Gap, "gap"}, {flagGradErr, &r.GradErr, "grad_err"}} {
			if flags&c.flag != 0 {
				v := d.f64(c.name, &prev[3+j])
				*c.dst = &v
			}
		}
		if flags&flagExtra != 0 {
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
		if d.err == nil {
			out = append(out, r)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return out, d.err
}
