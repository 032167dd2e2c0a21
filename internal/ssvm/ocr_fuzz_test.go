package ssvm

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// FuzzReadOCR: any file, plain or gzip-compressed, is read or refused with
// an error naming the file; never a panic. An accepted corpus is
// consistent: one label per letter, OCRFeat features each, words covering
// the letters in order, one fold per word.
func FuzzReadOCR(f *testing.F) {
	zero := func(r, c int) int { return 0 }
	one := func(r, c int) int { return (r + c) % 2 }
	good := tsvLine(1, "o", 2, 1, 1, 0, zero) + "\n" + tsvLine(2, "k", -1, 1, 2, 0, one) + "\n"
	f.Add([]byte(good))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(good))
	_ = zw.Close()
	f.Add(gz.Bytes())
	f.Add([]byte(tsvLine(1, "a", 3, 1, 1, 0, zero) + "\n"))
	f.Add([]byte("\x1f\x8b"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := ReadOCR(bytes.NewReader(in), "f.tsv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.tsv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		d := &c.Data
		n := len(d.Y)
		if n == 0 || len(d.X) != n*OCRFeat {
			t.Fatalf("%d labels, %d features", n, len(d.X))
		}
		if len(c.Folds) != len(d.Words) {
			t.Fatalf("%d folds for %d words", len(c.Folds), len(d.Words))
		}
		next := 0
		for _, w := range d.Words {
			if w.Start != next || w.Len < 1 {
				t.Fatalf("word %+v after letter %d", w, next)
			}
			next += w.Len
		}
		if next != n {
			t.Fatalf("words cover %d of %d letters", next, n)
		}
		for _, y := range d.Y {
			if y < 0 || y >= OCRLabels {
				t.Fatalf("label %d", y)
			}
		}
	})
}
