package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// tooLarge is the bounded reader's refusal.
type tooLarge struct{ max int64 }

func (e *tooLarge) Error() string { return fmt.Sprintf("a value larger than %s", sizeName(e.max)) }

// boundedReader refuses to read more than a bound past the point where it
// was armed: a value larger than its bound fails without being buffered
// whole.
type boundedReader struct {
	r        io.Reader
	n        int64 // bytes read
	lines    int64 // newlines read
	limit    int64 // refuse reads past this (< 0: none)
	armedFor int64
}

func (b *boundedReader) arm(max int64) {
	if max < 0 {
		b.limit = -1
		return
	}
	b.limit, b.armedFor = b.n+max, max
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.limit >= 0 {
		if b.n >= b.limit {
			return 0, &tooLarge{b.armedFor}
		}
		if rem := b.limit - b.n; int64(len(p)) > rem {
			p = p[:rem]
		}
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
	return n, err
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// takeOver hands the input from the JSON decoder (just after a records
// array's opening bracket) to the scanner.
func (d *decoder) takeOver() *scanner {
	s := &d.scan
	buffered, _ := io.ReadAll(d.dec.Buffered())
	s.buf = append(append(s.buf[:0], buffered...), d.in.b...)
	d.in.b = nil
	s.pos = 0
	s.off = d.src.n - int64(len(s.buf))
	s.line = 1 + int(d.src.lines) - bytes.Count(s.buf, []byte{'\n'})
	s.r, s.rerr = d.src, nil
	d.src.arm(-1)
	return s
}

// resumePrefix is what a new JSON decoder reads first to be where the
// scanner stops: in a trace's records array (a json.Decoder cannot be
// moved to a position in its input, and checks a document's structure as
// a whole).
const resumePrefix = `{"":[{"":[`

// resume hands the input back to a new JSON decoder, at the scanner's
// position (a records array's closing bracket).
func (d *decoder) resume() error {
	s := &d.scan
	d.in.b = append([]byte(resumePrefix), s.buf[s.pos:]...)
	d.base = s.off + int64(s.pos) - int64(len(resumePrefix))
	s.buf = s.buf[:0]
	d.dec = json.NewDecoder(d.in)
	for range 6 {
		if _, err := d.dec.Token(); err != nil {
			return err // not met: resumePrefix is what it reads
		}
	}
	return nil
}

// replay reads b, then r.
type replay struct {
	b []byte
	r io.Reader
}

func (p *replay) Read(q []byte) (int, error) {
	if len(p.b) > 0 {
		n := copy(q, p.b)
		p.b = p.b[n:]
		return n, nil
	}
	return p.r.Read(q)
}
