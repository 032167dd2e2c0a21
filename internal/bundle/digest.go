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

	"github.com/fwlab/fwlab/internal/recordfields"
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
// i64(its length in bytes) followed by its UTF-8 bytes, opt an optional
// number as the byte 0x00 (null) or 0x01 followed by f64, and H(x) the 32
// bytes of the SHA-256 of x:
//
//	digest   = H("fwlab-digest-1\n" · i64(number of traces) · trace…)   (traces in order)
//	trace    = str(algo) · i64(replication) · i64(seed) · summary
//	           · i64(number of records) · H(record…)                    (records in order)
//	summary  = 0x00 (none) | 0x01 · f64(objective) · f64(gap) · i64(iters) · f64(passes)
//	           · f64(time_s) · str(status) · str(message)
//	           [· 0x02 · str(trace status)]   (only when the trace's status is not "" and
//	                                          not its summary's: none, or another)
//	record   = i64(k) · f64(passes) · f64(time_s) · str(step) · f64(gamma) · i64(batch)
//	           · i64(active) · i64(fw_steps) · i64(away_steps) · i64(drops) · i64(cleanups)
//	           · opt(objective) · opt(gap) · opt(grad_err)
//	           · i64(number of extra values) · (str(key) · f64(value))…   (keys in byte order)
//	           · (str(name) · value)…   (each field added after these, in declaration
//	                                      order, only when it is set: docs/compatibility.md)
//
// A trace's records are hashed on their own, so that the digest can be
// computed as a bundle streams in, whatever the order of its fields: a
// trace's header may come after its records.
//
// Every field of every record is covered, time_s included: the digest says
// whether the bundle's records are the ones written, not whether a re-run
// reproduces them (that is `dashboard verify`'s comparison, which leaves
// time_s out), and so is each trace's status (which says whether a trace
// finished, and so how `verify` compares it): as its summary's status, or
// after it when the trace says otherwise (a bundle whose traces' statuses
// are their summaries' has the digest it had before traces' statuses were
// covered). The spec, the instance summary, names, notes, the run's status,
// panels and aggregates are not covered.
func Digest(b *Bundle) string {
	var d digester
	for i := range b.Traces {
		t := &b.Traces[i]
		for j := range t.Records {
			d.record(&t.Records[j])
		}
		d.endRecords()
	}
	return d.sum(b.Traces)
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

// digester computes a digest as the records stream by: record for each
// record of a trace, endRecords after its last, and sum with the traces'
// headers (their Records are not read) once they are known: a trace's
// header may come after its records. It keeps 40 bytes a trace. The zero
// value is ready.
type digester struct {
	recs   hash.Hash // the current trace's records
	n      int64     // their number
	traces []byte    // for each trace whose records ended: i64(records) · H(records)
	buf    []byte    // the current trace's records not yet hashed
}

func appendI64(b []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(v)) }

func appendF64(b []byte, v float64) []byte {
	bits := math.Float64bits(v)
	if v != v {
		bits = canonicalNaN
	}
	return binary.LittleEndian.AppendUint64(b, bits)
}

func appendStr(b []byte, s string) []byte { return append(appendI64(b, int64(len(s))), s...) }

func (d *digester) record(r *solver.Record) {
	if d.recs == nil {
		d.recs = sha256.New()
	}
	b := d.buf
	b = appendRecord(b, r)
	if len(b) >= 4096 {
		d.recs.Write(b)
		b = b[:0]
	}
	d.buf = b
	d.n++
}

// appendRecord appends a record's digest bytes, field by declared field
// (internal/recordfields): the fields of the record codec's version 1 in
// their order, always; a field added later only when it is set, as
// str(its name) · its value, so that a record without it keeps its digest.
func appendRecord(b []byte, r *solver.Record) []byte {
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if f.Since > 1 {
			if f.Zero(r) {
				continue
			}
			b = appendStr(b, f.JSON)
		}
		switch f.Kind {
		case recordfields.Int:
			b = appendI64(b, int64(f.Int(r)))
		case recordfields.Float:
			b = appendF64(b, f.Float(r))
		case recordfields.String:
			b = appendStr(b, f.Str(r))
		case recordfields.OptFloat:
			v, ok := f.Opt(r)
			if !ok {
				b = append(b, 0)
			} else {
				b = appendF64(append(b, 1), v)
			}
		case recordfields.Metrics:
			b = appendI64(b, int64(recordfields.MetricCount(r)))
			if len(r.Extra) == 0 {
				continue
			}
			keys := make([]string, 0, len(r.Extra))
			for k := range r.Extra {
				if !recordfields.IsSlot(k) {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				b = appendStr(b, k)
				b = appendF64(b, r.Extra[k])
			}
		}
	}
	return b
}

// endRecords closes the current trace's records.
func (d *digester) endRecords() {
	if d.recs == nil {
		d.recs = sha256.New()
	}
	d.recs.Write(d.buf)
	d.buf = d.buf[:0]
	d.traces = d.recs.Sum(appendI64(d.traces, d.n))
	d.recs.Reset()
	d.n = 0
}

// sum is the digest of the traces whose records ended, with their headers
// taken from traces (as many, in order).
func (d *digester) sum(traces []Trace) string {
	b := appendI64([]byte(digestDomain), int64(len(traces)))
	for i := range traces {
		t := &traces[i]
		b = appendStr(b, t.Algo)
		b = appendI64(b, int64(t.Replication))
		b = appendI64(b, t.Seed)
		if s := t.Summary; s == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = appendF64(b, s.Objective)
			b = appendF64(b, s.Gap)
			b = appendI64(b, int64(s.Iters))
			b = appendF64(b, s.Passes)
			b = appendF64(b, s.Time)
			b = appendStr(b, s.Status)
			b = appendStr(b, s.Message)
		}
		if t.Status != "" && (t.Summary == nil || t.Status != t.Summary.Status) {
			b = append(b, 2)
			b = appendStr(b, t.Status)
		}
		if j := 40 * i; j+40 <= len(d.traces) {
			b = append(b, d.traces[j:j+40]...)
		} else {
			// a trace whose records never ended: none
			b = sha256.New().Sum(appendI64(b, 0))
		}
	}
	h := sha256.Sum256(b)
	return DigestPrefix + hex.EncodeToString(h[:])
}
