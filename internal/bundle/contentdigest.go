package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"math"
	"strconv"

	"github.com/fwlab/fwlab/internal/solver"
)

// contentDigest identifies a bundle by its content, computed while it
// streams in: the SHA-256 of the bundle as Encode writes it (its own field
// order, number forms and white space; "aggregates", derived and not
// stored, and the bundle's own "digest" left out), so that the same run
// reads as the same bundle however its file was laid out. Import records
// it with the run and answers the run stored first for a bundle imported
// again. This is the one place that defines it.
//
// It is not Digest (the traces' digest a bundle carries): that one covers
// the traces alone, so two runs of different specs with equal records
// share it. (Encode writes a "digest" here too, of the traces' headers
// without records: a function of the head, so it changes nothing.)
type contentDigest struct {
	recs hash.Hash // every record, trace by trace, as Encode writes it
	enc  encoder   // its buf: what recs is yet to hash

	// the numbers of the record being hashed that were read in the
	// encoder's form: copied as read rather than written again
	forms *numberForms
	nums  []numberForm
}

func newContentDigest() *contentDigest {
	c := &contentDigest{recs: sha256.New()}
	st := recordStyle
	st.Float = c.float
	c.enc.style = &st
	return c
}

// float appends f as the encoder writes it: its text as read when it was
// read in that form (the form is f's alone, whichever field it was read
// in), else by appendFloat.
func (c *contentDigest) float(b []byte, f float64) []byte {
	bits := math.Float64bits(f)
	for _, n := range c.nums {
		if n.bits == bits {
			return append(b, c.forms.text[n.off:n.off+n.n]...)
		}
	}
	return appendFloat(b, f)
}

// record hashes r, encoded; forms (if any) has r's text (record j of its
// chunk) when it is the encoder's (canonical), else the numbers of r that
// were read in the encoder's form.
func (c *contentDigest) record(r *solver.Record, forms *numberForms, j int) {
	c.forms, c.nums = forms, nil
	if forms != nil {
		if w := forms.wholeText(j); w != nil {
			// the encoder's text already: hashed as read
			c.enc.buf = append(append(c.enc.buf, w...), '\n')
			c.flush(32 << 10)
			return
		}
		c.nums = forms.of(j)
	}
	c.enc.record(r)
	c.forms, c.nums = nil, nil
	c.enc.buf = append(c.enc.buf, '\n')
	c.flush(32 << 10)
}

// flush hashes what is pending once it is at least n bytes.
func (c *contentDigest) flush(n int) {
	if len(c.enc.buf) >= n {
		c.recs.Write(c.enc.buf)
		c.enc.buf = c.enc.buf[:0]
	}
}

func (c *contentDigest) endTrace(i int) {
	c.enc.buf = strconv.AppendInt(append(c.enc.buf, "end of trace "...), int64(i), 10)
	c.enc.buf = append(c.enc.buf, '\n')
	c.flush(0)
}

// contentDigestFormat is the format version the content digest hashes a
// bundle's head as: the version fwlab wrote when the digest was defined,
// fixed, so that a field added to the record (a higher format version,
// docs/compatibility.md) leaves every bundle's content digest as it was,
// and an import of a bundle imported before finds the run it stored.
const contentDigestFormat = 2

// sum is the digest of b (its Traces without records, as they were read)
// with the records hashed so far.
func (c *contentDigest) sum(b *Bundle) (string, error) {
	h := sha256.New()
	head := *b
	head.Aggregates, head.Digest = nil, ""
	if err := encodeAs(h, &head, contentDigestFormat, func(int, func(*solver.Record) error) error { return nil }); err != nil {
		return "", err
	}
	c.flush(0)
	h.Write(c.recs.Sum(nil))
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
