package ssvm

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tsvLine builds a valid TSV line with the given first six columns and a
// pixel pattern.
func tsvLine(id int, letter string, next, word, pos, fold int, pix func(r, c int) int) string {
	f := []string{itoa(id), letter, itoa(next), itoa(word), itoa(pos), itoa(fold)}
	for r := 0; r < OCRRows; r++ {
		for c := 0; c < OCRCols; c++ {
			f = append(f, itoa(pix(r, c)))
		}
	}
	return strings.Join(f, "\t")
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestParseLetterFeatureMap(t *testing.T) {
	// One pixel set at row 3, column 5: column-major index 16·5 + 3 = 83.
	line := tsvLine(1, "c", -1, 1, 1, 4, func(r, c int) int {
		if r == 3 && c == 5 {
			return 1
		}
		return 0
	})
	l, err := ParseLetter(line)
	if err != nil {
		t.Fatal(err)
	}
	if l.Label != 2 || l.Fold != 4 || l.NextID != -1 {
		t.Fatalf("parsed %+v", l)
	}
	x := make([]float64, OCRFeat)
	l.Features(x)
	for j, v := range x {
		want := 0.0
		if j == 83 || j == OCRPixels {
			want = 1
		}
		if v != want {
			t.Fatalf("x[%d] = %v, want %v", j, v, want)
		}
	}
}

func TestParseLetterErrors(t *testing.T) {
	zero := func(r, c int) int { return 0 }
	good := tsvLine(1, "a", 2, 1, 1, 0, zero)
	cols := strings.Split(good, "\t")
	with := func(col int, v string) string {
		c := append([]string(nil), cols...)
		c[col-1] = v
		return strings.Join(c, "\t")
	}
	cases := []struct {
		name, line, want string
	}{
		{"columns", strings.Join(cols[:50], "\t"), "134 tab-separated columns, got 50"},
		{"id", with(1, "x"), "column 1 (id)"},
		{"id zero", with(1, "0"), "column 1 (id): must be ≥ 1"},
		{"letter", with(2, "A"), "column 2 (letter)"},
		{"next", with(3, "-2"), "column 3 (next_id)"},
		{"position", with(5, "0"), "column 5 (position)"},
		{"fold", with(6, "10"), "column 6 (fold): must be 0–9"},
		{"pixel", with(7+9, "2"), "column 16 (pixel 1,1): must be 0 or 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLetter(tc.line)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadOCRErrors(t *testing.T) {
	zero := func(r, c int) int { return 0 }
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"unterminated", []string{tsvLine(1, "a", 2, 1, 1, 0, zero)}, "x.tsv:1: the last word is not terminated"},
		{"fold change", []string{tsvLine(1, "a", 2, 1, 1, 0, zero), tsvLine(2, "b", -1, 1, 2, 1, zero)}, "x.tsv:2: column 6 (fold)"},
		{"bad next", []string{tsvLine(1, "a", 5, 1, 1, 0, zero)}, "x.tsv:1: column 3 (next_id)"},
		{"ids", []string{tsvLine(2, "a", -1, 1, 1, 0, zero), tsvLine(1, "a", -1, 2, 1, 0, zero)}, "x.tsv:2: column 1 (id): ids must increase"},
		{"empty line", []string{tsvLine(1, "a", -1, 1, 1, 0, zero), "", tsvLine(2, "a", -1, 2, 1, 0, zero)}, "x.tsv:2: empty line"},
		{"empty", nil, "x.tsv: no letters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Join(tc.lines, "\n")
			if len(tc.lines) > 0 {
				in += "\n"
			}
			_, err := ReadOCR(strings.NewReader(in), "x.tsv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadOCRGzipAndResolve(t *testing.T) {
	zero := func(r, c int) int { return (r + c) % 2 }
	lines := []string{
		tsvLine(1, "a", 2, 1, 1, 0, zero), tsvLine(2, "b", -1, 1, 2, 0, zero),
		tsvLine(3, "z", -1, 2, 1, 3, zero),
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(strings.Join(lines, "\n") + "\n"))
	zw.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, OCRFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadOCR(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Data.Words) != 2 || c.Folds[1] != 3 || c.Data.Y[2] != 25 {
		t.Fatalf("read %+v folds %v", c.Data.Words, c.Folds)
	}
	tr, te, err := c.Split("train")
	if err != nil || len(tr.Words) != 1 || len(te.Words) != 1 || tr.Y[0] != 25 {
		t.Fatalf("split: %v %v %v", tr, te, err)
	}
	if _, _, err := c.Split("big"); err == nil || !strings.Contains(err.Error(), "split: must be train or small") {
		t.Fatalf("bad split error %v", err)
	}
	missing := filepath.Join(dir, "nope")
	_, err = LoadOCR(missing)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing data: error %v should name %s", err, missing)
	}
	t.Setenv(EnvOCR, dir)
	if p, err := ResolveOCR(""); err != nil || p != filepath.Join(dir, OCRFile) {
		t.Fatalf("env resolution: %q %v", p, err)
	}
}

func FuzzParseLetter(f *testing.F) {
	zero := func(r, c int) int { return 0 }
	f.Add(tsvLine(1, "o", 2, 1, 1, 0, zero))
	f.Add(tsvLine(52152, "z", -1, 6877, 3, 9, func(r, c int) int { return 1 }))
	f.Add("1\ta\t")
	f.Add("")
	f.Fuzz(func(t *testing.T, line string) {
		l, err := ParseLetter(line)
		if err != nil {
			return
		}
		if l.Label < 0 || l.Label >= OCRLabels || l.Fold < 0 || l.Fold > 9 || l.ID < 1 || l.Position < 1 {
			t.Fatalf("accepted invalid letter %+v from %q", l, line)
		}
		for _, p := range l.Pixels {
			if p > 1 {
				t.Fatalf("pixel %d accepted", p)
			}
		}
	})
}

// TestReadOCRAcrossBlocks: a corpus of more letters than two of ReadOCR's
// blocks is read as each line's ParseLetter and Features give it, letter
// by letter, and Split keeps exactly the words of its folds.
func TestReadOCRAcrossBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var lines []string
	var want Dataset
	var folds []int
	id := 1
	for word := 1; len(lines) < 2*ocrBlock+5; word++ {
		n, fold := 1+rng.IntN(9), rng.IntN(10)
		want.Words = append(want.Words, Word{Start: len(want.Y), Len: n})
		folds = append(folds, fold)
		for pos := 1; pos <= n; pos++ {
			next := id + 1
			if pos == n {
				next = -1
			}
			seed := rng.IntN(1 << 20)
			line := tsvLine(id, string(rune('a'+seed%26)), next, word, pos, fold, func(r, c int) int { return (seed >> ((r*OCRCols + c) % 20)) & 1 })
			lines = append(lines, line)
			l, err := ParseLetter(line)
			if err != nil {
				t.Fatal(err)
			}
			f := make([]float64, OCRFeat)
			l.Features(f)
			want.X = append(want.X, f...)
			want.Y = append(want.Y, l.Label)
			id++
		}
	}
	text := strings.Join(lines, "\n") + "\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, OCRFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := ocrLines(strings.NewReader(text)); n != len(lines) || err != nil {
		t.Errorf("ocrLines: %d, %v; want %d", n, err, len(lines))
	}
	var c *Corpus
	for _, tc := range []struct {
		how   string
		read  func() (*Corpus, error)
		exact bool // X is made once, to its size
	}{
		{"ReadOCR", func() (*Corpus, error) { return ReadOCR(strings.NewReader(text), "x.tsv") }, true},
		{"10 letters expected", func() (*Corpus, error) { return readOCR(strings.NewReader(text), "x.tsv", 10) }, true},
		{"3 times the letters expected", func() (*Corpus, error) { return readOCR(strings.NewReader(text), "x.tsv", 3*len(lines)) }, false},
		{"LoadOCR", func() (*Corpus, error) { return LoadOCR(dir) }, true},
	} {
		got, err := tc.read()
		if err != nil {
			t.Fatalf("%s: %v", tc.how, err)
		}
		d := got.Data
		if !slices.Equal(d.X, want.X) || !slices.Equal(d.Y, want.Y) || !slices.Equal(d.Words, want.Words) || !slices.Equal(got.Folds, folds) {
			t.Fatalf("%s: read %d letters, %d words; want %d letters, %d words (or the features, labels or folds differ)", tc.how, len(d.Y), len(d.Words), len(want.Y), len(want.Words))
		}
		if tc.exact && len(d.X) != cap(d.X) {
			t.Errorf("%s: X holds %d values in room for %d", tc.how, len(d.X), cap(d.X))
		}
		c = got
	}
	train, test, err := c.Split("train")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		got  *Dataset
		keep func(int) bool
	}{{train, func(f int) bool { return f != 0 }}, {test, func(f int) bool { return f == 0 }}} {
		var ref Dataset
		for i, w := range want.Words {
			if tc.keep(folds[i]) {
				ref.Words = append(ref.Words, Word{Start: len(ref.Y), Len: w.Len})
				ref.Y = append(ref.Y, want.Y[w.Start:w.Start+w.Len]...)
				ref.X = append(ref.X, want.X[w.Start*OCRFeat:(w.Start+w.Len)*OCRFeat]...)
			}
		}
		if len(ref.Words) == 0 || !slices.Equal(tc.got.X, ref.X) || !slices.Equal(tc.got.Y, ref.Y) || !slices.Equal(tc.got.Words, ref.Words) {
			t.Errorf("%s: %d words, %d letters; want %d words, %d letters (or the values differ)", tc.got.Name, len(tc.got.Words), len(tc.got.Y), len(ref.Words), len(ref.Y))
		}
	}
}

// ocrLines never counts more lines than the text's bytes could hold as
// letters: a file of newlines makes no room for a letter a line.
func TestOCRLinesBoundedBySize(t *testing.T) {
	line := tsvLine(1, "a", -1, 1, 1, 0, func(r, c int) int { return 0 })
	for _, tc := range []struct {
		text string
		want int
	}{
		{strings.Repeat("\n", 1<<20), (1 << 20) / (2*(6+OCRPixels) - 1)},
		{line + "\n" + line, 2},
		{line + "\n\n", 1}, // two lines, but bytes for one letter
		{"", 0},
	} {
		if n, err := ocrLines(strings.NewReader(tc.text)); n != tc.want || err != nil {
			t.Errorf("ocrLines of %d bytes: %d, %v; want %d", len(tc.text), n, err, tc.want)
		}
	}
}
