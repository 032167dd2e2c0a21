package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
//	  8 bytes  passes, time_s, gamma (IEEE 754 bits, little endian)
//	  varint   batch, active
//	  varint   fw_steps, away_steps, drops, cleanups when flagged
//	  8 bytes  objective, gap, grad_err when flagged
//	  uvarint  extra count, then (uvarint key index, 8 bytes value) in key order
//
// Integers are zig-zag varints (one byte for the usual small values), floats
// their exact bits: a decoded record is bit-identical to the appended one,
// NaN payloads included. The only normalisation: an empty, non-nil Extra map
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
		b = appendF64(b, r.Passes)
		b = appendF64(b, r.Time)
		b = appendF64(b, r.Gamma)
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
		for _, p := range [...]*float64{r.Objective, r.Gap, r.GradErr} {
			if p != nil {
				b = appendF64(b, *p)
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
				b = binary.AppendUvarint(b, uint64(index[k]))
				b = appendF64(b, r.Extra[k])
			}
		}
	}
	return b
}

func appendF64(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
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

func (d *decoder) f64(what string) float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail(what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
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
	n := d.count("record count", 29)
	k := 0
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
		r.Passes = d.f64("passes")
		r.Time = d.f64("time_s")
		r.Gamma = d.f64("gamma")
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
		for _, c := range [...]struct {
			flag uint64
			dst  **float64
			name string
		}{{flagObjective, &r.Objective, "objective"}, {flagGap, &r.Gap, "gap"}, {flagGradErr, &r.GradErr, "grad_err"}} {
			if flags&c.flag != 0 {
				v := d.f64(c.name)
				*c.dst = &v
			}
		}
		if flags&flagExtra != 0 {
			m := d.count("extra count", 9)
			r.Extra = make(map[string]float64, m)
			for j := 0; j < m && d.err == nil; j++ {
				key := str("extra key")
				r.Extra[key] = d.f64("extra value")
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
