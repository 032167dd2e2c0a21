package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
)

// referenceEncodeBatch is the record codec written plainly, as its layout
// reads (codec.go): a map of the batch's strings, every record's metric
// keys sorted again, each float's bytes appended one by one. encodeBatch
// must write these bytes exactly.
func referenceEncodeBatch(b []byte, recs []solver.Record) []byte {
	plan := &plans[codecVersion]
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
		r := &recs[i]
		for _, c := range plan.fields {
			if c.f.Kind == recordfields.String {
				intern(c.f.Str(r))
			}
		}
		for k := range r.Extra {
			if !recordfields.IsSlot(k) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			for _, k := range keys {
				intern(k)
			}
			keys = keys[:0]
		}
	}
	b = append(b, byte(codecVersion))
	b = binary.AppendUvarint(b, uint64(len(strs)))
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(recs)))
	prevK := 0
	var small [8]uint64
	prev := small[:0]
	for range plan.columns {
		prev = append(prev, 0)
	}
	prevExtra := map[int]uint64{} // by key index
	for i := range recs {
		r := &recs[i]
		var flags uint64
		for _, c := range plan.fields {
			if c.flag != 0 && !c.f.Zero(r) {
				flags |= c.flag
			}
		}
		b = binary.AppendUvarint(b, flags)
		for _, c := range plan.fields {
			f := c.f
			switch f.Kind {
			case recordfields.Int:
				v := f.Int(r)
				switch {
				case f.Index:
					b = binary.AppendVarint(b, int64(v)-int64(prevK))
					prevK = v
				case c.flag == 0 || flags&c.flag != 0:
					b = binary.AppendVarint(b, int64(v))
				}
			case recordfields.String:
				b = binary.AppendUvarint(b, uint64(index[f.Str(r)]))
			case recordfields.Float:
				b = referenceAppendF64(b, f.Float(r), &prev[c.column])
			case recordfields.OptFloat:
				if flags&c.flag != 0 {
					v, _ := f.Opt(r)
					b = referenceAppendF64(b, v, &prev[c.column])
				}
			case recordfields.Metrics:
				if flags&c.flag == 0 {
					continue
				}
				keys = keys[:0]
				for k := range r.Extra {
					if !recordfields.IsSlot(k) {
						keys = append(keys, k)
					}
				}
				sort.Strings(keys)
				b = binary.AppendUvarint(b, uint64(len(keys)))
				for _, k := range keys {
					ki := index[k]
					b = binary.AppendUvarint(b, uint64(ki))
					p := prevExtra[ki]
					b = referenceAppendF64(b, r.Extra[k], &p)
					prevExtra[ki] = p
				}
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
func referenceAppendF64(b []byte, f float64, prev *uint64) []byte {
	v := math.Float64bits(f)
	x, mode := v, byte(0)
	if xr := v ^ *prev; referenceSigBytes(xr) < referenceSigBytes(v) {
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

func referenceSigBytes(x uint64) int {
	lead, trail := zeroBytes(x)
	return 8 - lead - trail
}

// The codec writes the bytes of its plain reference on every kind of batch:
// random records of every declared field, metric key sets that repeat,
// change, keep their count with other keys, or come and go, and batches
// with more strings than the short list the encoder searches.
func TestEncoderWritesTheReferenceBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := func(n, base int) map[string]float64 {
		m := map[string]float64{}
		for j := range n {
			m[fmt.Sprintf("k%02d", base+j)] = recordfields.RandFloat(rng)
		}
		return m
	}
	var batches [][]solver.Record
	for _, n := range []int{1, 2, 17, 256, 500} {
		for range 10 {
			batches = append(batches, randRecords(rng, n))
		}
	}
	for trial := range 40 {
		recs := randRecords(rng, 300)
		for i := range recs {
			switch trial % 4 {
			case 0: // one key set throughout, new values
				recs[i].Extra = keys(5, 0)
			case 1: // the same count, keys shifted now and then
				recs[i].Extra = keys(5, i/7)
			case 2: // many keys: more strings than the short list
				recs[i].Extra = keys(1+rng.IntN(40), rng.IntN(30))
			case 3: // metrics come and go, some only the solver's slots
				if rng.IntN(3) == 0 {
					recs[i].Extra = nil
				} else {
					recs[i].Extra = keys(rng.IntN(4), rng.IntN(3))
					for _, f := range recordfields.Slots {
						if rng.IntN(2) == 0 {
							recs[i].Extra[f.JSON] = recordfields.RandFloat(rng)
						}
					}
				}
			}
			if rng.IntN(5) == 0 {
				recs[i].Step = fmt.Sprintf("s%d", rng.IntN(25))
			}
		}
		batches = append(batches, recs)
	}
	for i, recs := range batches {
		want := referenceEncodeBatch(nil, recs)
		got := encodeBatch([]byte("prefix"), recs)
		if !bytes.Equal(got[6:], want) {
			t.Fatalf("batch %d (%d records): %d bytes, the reference %d, first difference at %d", i, len(recs), len(got)-6, len(want), firstDiff(got[6:], want))
		}
		checkRecords(t, mustDecode(t, got[6:]), recs)
	}
}
