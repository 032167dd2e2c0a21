package bundle

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/fwlab/fwlab/internal/solver"
)

// A trace's records are read in two stages, each on a goroutine of its
// own, a batch of records at a time. The reader (decoder.records) checks
// each record as JSON and its field names (scanner.shape), reading the
// float fields' numbers as it finds where they end (quickFloat), and keeps
// the record's text in the batch with where its fields' values are and the
// numbers read (shapedRecord); the converter reads the values from there
// (scanner.fields: the rules of each field, the numbers in the encoder's
// form for the digest), checks each record against those before it
// (checkRecord) and hands the batch to the sink. On two cores the two
// halves run side by side, and neither is as long as the whole.
//
// The error reported is the first in the document's order, as when one
// goroutine read it all: the converter reads the records in order and
// stops at its first failure, which the reader returns at its next
// hand-off; a failure the reader meets is in a record after all those it
// handed over, so it first lets the converter read those (and the ones
// before it in its batch) and returns the converter's failure if there is
// one.

// shapedRecord is a record the reader has checked as JSON, on its way to
// the converter: its text (in its batch's forms.text) and where its
// fields are.
type shapedRecord struct {
	lo, n uint32 // its text: forms.text[lo:lo+n]
	line  int    // the line of its first byte
	off   int64  // the document's offset of its first byte
	// where its fields' values are (from lo), those in have
	spans [numRecordFields][2]uint32
	have  uint16
	loose bool
	// the float fields' numbers read as the record was scanned (quickFloat)
	quick, quickEnc uint16
	quickX          [numRecordFields]float64
	later           [2]uint32 // its later fields: the batch's later[later[0]:later[1]]
}

// shapeInto is the reader's half of reading the record at buf[s.pos]
// (not white space): it shapes it, keeps it in b and moves past it.
func (s *scanner) shapeInto(b *recordBatch) error {
	line := s.line
	end, err := s.shape()
	if err != nil {
		return err
	}
	b.keep(s, end, line)
	s.line += bytes.Count(s.buf[s.pos:end], []byte{'\n'})
	s.pos = end
	return nil
}

// readShaped is the converter's half: it reads record k of b into r,
// keeping its numbers in the encoder's form in s.forms (when not nil).
func (s *scanner) readShaped(b *recordBatch, k int, r *solver.Record) error {
	rec := s.restore(b, k)
	if err := s.fields(r); err != nil {
		return err
	}
	if s.forms != nil {
		s.forms.keepInPlace(rec, s.canonical(), s.pending)
	}
	return nil
}

// keep adds the record the reader's scanner s has just shaped (at s.pos,
// ending at end; line is s.line there) to b.
func (b *recordBatch) keep(s *scanner, end, line int) {
	lo := len(b.forms.text)
	b.forms.text = append(b.forms.text, s.buf[s.pos:end]...)
	b.shaped = append(b.shaped, shapedRecord{lo: uint32(lo), n: uint32(end - s.pos), line: line, off: s.off + int64(s.pos),
		have: s.have, loose: s.loose, quick: s.quick, quickEnc: s.quickEnc & s.quick})
	r := &b.shaped[len(b.shaped)-1]
	for f := range numRecordFields {
		if s.have&(1<<f) != 0 {
			r.spans[f] = [2]uint32{uint32(s.spans[f].lo - s.pos), uint32(s.spans[f].hi - s.pos)}
			r.quickX[f] = s.quickX[f]
		}
	}
	r.later[0] = uint32(len(b.later))
	for _, l := range s.later {
		b.later = append(b.later, laterKV{l.f, span{l.v.lo - s.pos + lo, l.v.hi - s.pos + lo}})
	}
	r.later[1] = uint32(len(b.later))
}

// restore sets the converter's scanner s as the reader's was once it had
// shaped record k of b, with the record's text at the same place in
// s.buf as in the document; it returns where the record is.
func (s *scanner) restore(b *recordBatch, k int) span {
	r := &b.shaped[k]
	lo := int(r.lo)
	s.buf, s.pos, s.line, s.off = b.forms.text, lo, r.line, r.off-int64(lo)
	for f := range numRecordFields {
		s.spans[f] = span{lo + int(r.spans[f][0]), lo + int(r.spans[f][1])}
	}
	s.have, s.loose, s.twice, s.others = r.have, r.loose, -1, s.others[:0]
	s.quick, s.quickEnc, s.quickX = r.quick, r.quickEnc, r.quickX
	s.later = append(s.later[:0], b.later[r.later[0]:r.later[1]]...)
	return span{lo, lo + int(r.n)}
}

// converterBatches is how many batches the reader and the converter pass
// between them: one being filled, one waiting, one being read.
const converterBatches = 3

// converter reads the fields of a trace's records shaped by the reader.
// Its calls of the sink (records) come between the reader's (beginTrace
// before it starts, endTrace once it has ended).
type converter struct {
	d     *decoder
	path  string // the trace's records
	trace int
	next  int // the index of the next record in the trace

	todo   chan *recordBatch // from the reader
	free   chan *recordBatch // back to the reader (nil: a new one)
	failed chan struct{}     // closed at the converter's failure (err)
	done   chan struct{}     // closed when it has ended
	closed bool              // todo
	err    error
}

func (d *decoder) startConverter(path string, i int) *converter {
	c := &converter{d: d, path: path, trace: i, todo: make(chan *recordBatch, converterBatches),
		free: make(chan *recordBatch, converterBatches), failed: make(chan struct{}), done: make(chan struct{})}
	for range converterBatches {
		var b *recordBatch
		if n := len(d.spare); n > 0 {
			b, d.spare = d.spare[n-1], d.spare[:n-1]
		}
		c.free <- b
	}
	go c.run()
	return c
}

func (c *converter) run() {
	defer close(c.done)
	for b := range c.todo {
		if c.err == nil {
			if c.err = c.read(b); c.err == nil && !b.checkOnly {
				b, c.err = c.toSink(b)
			}
			if c.err != nil {
				close(c.failed)
			}
		}
		if b != nil && len(b.shaped) > 0 {
			b.reset()
		}
		c.free <- b
	}
}

// toSink hands b to the sink and returns the batch it gives back, with
// b's shaped records' room (not needed any more: the reader's alone, so
// that the batches on their way in the sink do not hold it).
func (c *converter) toSink(b *recordBatch) (*recordBatch, error) {
	shaped := b.shaped
	b.shaped = nil
	next, err := c.d.sink.records(c.trace, b)
	if err != nil {
		return nil, err
	}
	if next == nil {
		next = newRecordBatch()
	}
	next.shaped = shaped[:0]
	return next, nil
}

func newRecordBatch() *recordBatch {
	return &recordBatch{recs: make([]solver.Record, 0, chunkRecords)}
}

// read reads the fields of b's records into b.recs, checks each and keeps
// their numbers in the encoder's form (Import).
func (c *converter) read(b *recordBatch) error {
	d := c.d
	s, m := &d.conv, &d.metas[c.trace]
	if s.forms = nil; d.keepForms {
		s.forms = &b.forms
	}
	defer func() { s.forms, s.buf = nil, nil }()
	for k := range b.shaped {
		b.recs = append(b.recs, solver.Record{})
		r := &b.recs[k]
		j := c.next + k
		if err := s.readShaped(b, k, r); err != nil {
			return s.errorAt(fmt.Sprintf("%s[%d]", c.path, j), err)
		}
		if err := d.checkRecord(c.path, j, m, r); err != nil {
			var be *Error
			if errors.As(err, &be) {
				be.Msg += fmt.Sprintf(" (line %d)", b.shaped[k].line)
			}
			return err
		}
	}
	c.next += len(b.shaped)
	return nil
}

// batch is an empty batch for the reader to fill, or the converter's
// failure.
func (c *converter) batch() (*recordBatch, error) {
	select {
	case b := <-c.free:
		if b == nil {
			b = newRecordBatch()
		}
		return b, nil
	case <-c.failed:
		return nil, c.err
	}
}

// send hands b, filled, to the converter, or returns its failure.
func (c *converter) send(b *recordBatch) error {
	select {
	case c.todo <- b:
		return nil
	case <-c.failed:
		return c.err
	}
}

// finish hands the converter the reader's last batch b (if it has
// records), waits for it to end and returns its failure.
func (c *converter) finish(b *recordBatch) error {
	if b != nil && len(b.shaped) > 0 {
		if err := c.send(b); err != nil {
			return err
		}
	}
	c.stop()
	return c.err
}

// fail is the reader's failure err, met after the records of b (which is
// not for the sink): it returns the converter's failure in a record
// before, if there is one, else err.
func (c *converter) fail(b *recordBatch, err error) error {
	if b != nil && len(b.shaped) > 0 {
		b.checkOnly = true
		c.send(b) // its failure, if any, is c.err
	}
	c.stop()
	if c.err != nil {
		return c.err
	}
	return err
}

// stop ends the converter (once it has read what it was handed) and keeps
// its free batches for the next trace.
func (c *converter) stop() {
	if !c.closed {
		c.closed = true
		close(c.todo)
	}
	<-c.done
	for {
		select {
		case b := <-c.free:
			if b != nil {
				c.d.spare = append(c.d.spare, b)
			}
		default:
			return
		}
	}
}
