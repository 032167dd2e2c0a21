package bundle

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"

	"github.com/fwlab/fwlab/internal/solver"
)

// digestDomain starts the encoding (see Digest).
const digestDomain = "fwlab-digest-1\n"

// DigestPrefix starts every digest.
const DigestPrefix = "sha256:"

// canonicalNaN is the bit pattern every NaN is encoded as.
const canonicalNaN = 0x7FF8000000000000

// ErrNoDigest is returned by CheckDigest for a bundle that carries no digest
// (one written before bundles had them).
var ErrNoDigest = errors.New("the bundle carries no digest (written by an fwlab older than format version 2): its integrity cannot be checked without re-running it")

// Digest returns the digest of b's traces, whatever b.Digest says.
//
// A bundle's "digest" is a SHA-256 over a canonical binary encoding of its
// traces, written as "sha256:" and 64 lower-case hexadecimal digits. It lets
// anyone check that a bundle's results are the ones it was written with,
// without re-running it (`dashboard verify -digest-only`), and it names a
// bundle's results whatever the JSON looks like (keys reordered, numbers
// spelt differently, white space): the same traces give the same digest on
// every platform.
//
// The encoding ("fwlab-digest-1"), where i64 is 8 bytes little-endian two's
// complement, f64 the 8 bytes little-endian of the IEEE-754 binary64 bits
// (every NaN as 0x7FF8000000000000; −0 and +0 stay apart), str a string as
// i64(its length in bytes) followed by its UTF-8 bytes, and opt an optional
// number as the byte 0x00 (null) or 0x01 followed by f64:
//
//	digest   = "fwlab-digest-1\n" · i64(number of traces) · trace…   (traces in order)
//	trace    = str(algo) · i64(replication) · i64(seed) · summary · (0x01 · record)… · 0x00
//	summary  = 0x00 (none) | 0x01 · f64(objective) · f64(gap) · i64(iters) · f64(passes)
//	           · f64(time_s) · str(status) · str(message)
//	record   = i64(k) · f64(passes) · f64(time_s) · str(step) · f64(gamma) · i64(batch)
//	           · i64(active) · i64(fw_steps) · i64(away_steps) · i64(drops) · i64(cleanups)
//	           · opt(objective) · opt(gap) · opt(grad_err)
//	           · i64(number of extra values) · (str(key) · f64(value))…   (keys in byte order)
//
// Every field of every record is covered, time_s included: the digest says
// whether the bundle's records are the ones written, not whether a re-run
// reproduces them (that is `dashboard verify`'s comparison, which leaves
// time_s out). The spec, the instance summary, names, notes, statuses of
// the run, panels and aggregates are not covered.
func Digest(b *Bundle) string {
	d := newDigester(len(b.Traces))
	for i := range b.Traces {
		t := &b.Traces[i]
		d.trace(t)
		for j := range t.Records {
			d.record(&t.Records[j])
		}
		d.endTrace()
	}
	return d.sum()
}

// CheckDigest compares the digest b carries with the digest of its traces:
// nil when they agree, ErrNoDigest when it carries none, else an error
// giving both.
func CheckDigest(b *Bundle) error {
	if b.Digest == "" {
		return ErrNoDigest
	}
	if got := Digest(b); got != b.Digest {
		return fmt.Errorf("digest mismatch: the bundle says %s but its traces digest to %s (its records or summaries were changed after it was written)", b.Digest, got)
	}
	return nil
}

// validDigest reports whether s has the form of a digest.
func validDigest(s string) bool {
	if len(s) != len(DigestPrefix)+2*sha256.Size || s[:len(DigestPrefix)] != DigestPrefix {
		return false
	}
	for _, c := range s[len(DigestPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// digester computes a digest as the traces stream by.
type digester struct {
	h   hash.Hash
	buf []byte
}

func newDigester(traces int) *digester {
	d := &digester{h: sha256.New(), buf: make([]byte, 0, 512)}
	d.buf = append(d.buf, digestDomain...)
	d.i64(int64(traces))
	return d
}

func (d *digester) i64(v int64) { d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v)) }

func (d *digester) f64(v float64) {
	bits := math.Float64bits(v)
	if v != v {
		bits = canonicalNaN
	}
	d.buf = binary.LittleEndian.AppendUint64(d.buf, bits)
}

func (d *digester) str(s string) {
	d.i64(int64(len(s)))
	d.buf = append(d.buf, s...)
}

func (d *digester) opt(p *float64) {
	if p == nil {
		d.buf = append(d.buf, 0)
		return
	}
	d.buf = append(d.buf, 1)
	d.f64(*p)
}

// flush hands the buffered bytes to the hash once there are enough.
func (d *digester) flush(force bool) {
	if force || len(d.buf) >= 4096 {
		d.h.Write(d.buf)
		d.buf = d.buf[:0]
	}
}

// trace starts a trace: its identity and summary (records follow).
func (d *digester) trace(t *Trace) {
	d.str(t.Algo)
	d.i64(int64(t.Replication))
	d.i64(t.Seed)
	if s := t.Summary; s == nil {
		d.buf = append(d.buf, 0)
	} else {
		d.buf = append(d.buf, 1)
		d.f64(s.Objective)
		d.f64(s.Gap)
		d.i64(int64(s.Iters))
		d.f64(s.Passes)
		d.f64(s.Time)
		d.str(s.Status)
		d.str(s.Message)
	}
	d.flush(false)
}

func (d *digester) record(r *solver.Record) {
	d.buf = append(d.buf, 1)
	d.i64(int64(r.K))
	d.f64(r.Passes)
	d.f64(r.Time)
	d.str(r.Step)
	d.f64(r.Gamma)
	for _, v := range [...]int{r.Batch, r.Active, r.FWSteps, r.AwaySteps, r.Drops, r.Cleanups} {
		d.i64(int64(v))
	}
	d.opt(r.Objective)
	d.opt(r.Gap)
	d.opt(r.GradErr)
	d.i64(int64(len(r.Extra)))
	if len(r.Extra) > 0 {
		keys := make([]string, 0, len(r.Extra))
		for k := range r.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			d.str(k)
			d.f64(r.Extra[k])
		}
	}
	d.flush(false)
}

func (d *digester) endTrace() { d.buf = append(d.buf, 0) }

func (d *digester) sum() string {
	d.flush(true)
	return DigestPrefix + hex.EncodeToString(d.h.Sum(nil))
}
