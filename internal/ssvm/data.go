// Package ssvm implements the structural SVM of the paper's Section 4.2 on
// chain-structured labelling problems (the OCR handwritten-words data and a
// seeded synthetic stand-in): the joint feature map, loss-augmented Viterbi
// decoding, and three solvers of the dual over a product of simplices —
// block-coordinate Frank-Wolfe (bcfw, Lacoste-Julien et al. 2013), its
// away-step, feature-sampling variant (bcfw-as, the paper's Algorithm 4) and
// the stochastic subgradient baseline (ssg). The solvers are solver.Methods
// that emit one solver.Record per block step.
package ssvm

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Dataset is a set of labelled chains (words). The letters of all words are
// stored contiguously: letter j has features X[j*Feat:(j+1)*Feat] and label
// Y[j]; word i covers the letters Words[i].Start … Words[i].Start+Words[i].Len−1.
type Dataset struct {
	Name   string
	Labels int // K, the alphabet size
	Feat   int // F, features per letter (including the constant 1)
	X      []float64
	Y      []int
	Words  []Word
}

// Word is one chain of a Dataset.
type Word struct {
	Start, Len int
}

// Letters returns the number of letters in the data set.
func (d *Dataset) Letters() int { return len(d.Y) }

// Dim returns the dimension of the joint feature map: K·F emissions, K first
// label indicators, K last label indicators and K² transitions.
func (d *Dataset) Dim() int { return d.Labels*d.Feat + 2*d.Labels + d.Labels*d.Labels }

// Validate checks the internal consistency of a data set.
func (d *Dataset) Validate() error {
	if d.Labels < 1 || d.Feat < 1 {
		return fmt.Errorf("data set %s: needs at least one label and one feature (labels %d, features %d)", d.Name, d.Labels, d.Feat)
	}
	if len(d.X) != len(d.Y)*d.Feat {
		return fmt.Errorf("data set %s: %d feature values for %d letters of %d features", d.Name, len(d.X), len(d.Y), d.Feat)
	}
	if len(d.Words) == 0 {
		return fmt.Errorf("data set %s: no words", d.Name)
	}
	next := 0
	for i, w := range d.Words {
		if w.Len < 1 || w.Start != next {
			return fmt.Errorf("data set %s: word %d covers letters [%d, %d), expected a non-empty range starting at %d", d.Name, i, w.Start, w.Start+w.Len, next)
		}
		next += w.Len
	}
	if next != len(d.Y) {
		return fmt.Errorf("data set %s: words cover %d letters of %d", d.Name, next, len(d.Y))
	}
	for j, y := range d.Y {
		if y < 0 || y >= d.Labels {
			return fmt.Errorf("data set %s: letter %d has label %d outside [0, %d)", d.Name, j, y, d.Labels)
		}
	}
	return nil
}

// OCR constants (data README).
const (
	OCRLabels = 26
	OCRRows   = 16
	OCRCols   = 8
	OCRPixels = OCRRows * OCRCols // 128
	OCRFeat   = OCRPixels + 1     // pixels plus a constant 1
	ocrFields = 6 + OCRPixels     // 134 tab-separated columns
)

// OCRFile is the data file looked for inside a data directory.
const OCRFile = "ocr_letters.tsv.gz"

// Letter is one parsed line of the OCR TSV file.
type Letter struct {
	ID, NextID, WordID, Position, Fold int
	Label                              int // 0..25 for 'a'..'z'
	Pixels                             [OCRPixels]uint8
}

// ParseLetter parses one line of the OCR TSV format (134 tab-separated
// columns: id, letter a–z, next_id (−1 ends a word), word_id, position, fold
// 0–9, then 128 pixels 0/1 in row-major order of a 16×8 image). The error
// names the column and the rule that failed.
func ParseLetter(line string) (Letter, error) {
	var l Letter
	line = strings.TrimRight(line, "\r\n")
	f := strings.Split(line, "\t")
	if len(f) != ocrFields {
		return l, fmt.Errorf("want %d tab-separated columns, got %d", ocrFields, len(f))
	}
	atoi := func(col int, name string) (int, error) {
		v, err := strconv.Atoi(f[col-1])
		if err != nil {
			return 0, fmt.Errorf("column %d (%s): want an integer, got %q", col, name, clip(f[col-1]))
		}
		return v, nil
	}
	var err error
	if l.ID, err = atoi(1, "id"); err != nil {
		return l, err
	}
	if l.ID < 1 {
		return l, fmt.Errorf("column 1 (id): must be ≥ 1, got %d", l.ID)
	}
	if len(f[1]) != 1 || f[1][0] < 'a' || f[1][0] > 'z' {
		return l, fmt.Errorf("column 2 (letter): must be one letter a–z, got %q", clip(f[1]))
	}
	l.Label = int(f[1][0] - 'a')
	if l.NextID, err = atoi(3, "next_id"); err != nil {
		return l, err
	}
	if l.NextID != -1 && l.NextID < 1 {
		return l, fmt.Errorf("column 3 (next_id): must be -1 or a letter id ≥ 1, got %d", l.NextID)
	}
	if l.WordID, err = atoi(4, "word_id"); err != nil {
		return l, err
	}
	if l.Position, err = atoi(5, "position"); err != nil {
		return l, err
	}
	if l.Position < 1 {
		return l, fmt.Errorf("column 5 (position): must be ≥ 1, got %d", l.Position)
	}
	if l.Fold, err = atoi(6, "fold"); err != nil {
		return l, err
	}
	if l.Fold < 0 || l.Fold > 9 {
		return l, fmt.Errorf("column 6 (fold): must be 0–9, got %d", l.Fold)
	}
	for p := 0; p < OCRPixels; p++ {
		s := f[6+p]
		switch s {
		case "0":
		case "1":
			l.Pixels[p] = 1
		default:
			return l, fmt.Errorf("column %d (pixel %d,%d): must be 0 or 1, got %q", 7+p, p/OCRCols, p%OCRCols, clip(s))
		}
	}
	return l, nil
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// Features writes the letter's feature vector (README feature map): the
// pixels in column-major order, x[16c+r] = p_r_c, followed by a constant 1.
func (l *Letter) Features(dst []float64) {
	for r := 0; r < OCRRows; r++ {
		for c := 0; c < OCRCols; c++ {
			dst[OCRRows*c+r] = float64(l.Pixels[r*OCRCols+c])
		}
	}
	dst[OCRPixels] = 1
}

// Corpus is the whole OCR data set with each word's cross-validation fold.
type Corpus struct {
	Data  Dataset
	Folds []int // per word
}

// ReadOCR reads the TSV format (optionally gzip-compressed: detected from the
// magic bytes) from r; name is used in errors.
func ReadOCR(r io.Reader, name string) (*Corpus, error) {
	return readOCR(r, name, 0)
}

// ocrText is r's text: r itself, or what it decompresses to when it starts
// with gzip's magic bytes. done closes the decompressor.
func ocrText(r io.Reader) (text io.Reader, done func() error, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return bufio.NewReaderSize(zr, 1<<16), zr.Close, nil
	}
	return br, func() error { return nil }, nil
}

// ocrLines counts the lines of r's text (a last one without its newline
// included), but at most as many as its bytes could hold: a letter's line
// has 6 + OCRPixels columns of at least one character each, tab-separated.
func ocrLines(r io.Reader) (int, error) {
	text, done, err := ocrText(r)
	if err != nil {
		return 0, err
	}
	defer done()
	buf := make([]byte, 1<<16)
	n, size, last := 0, 0, byte('\n')
	for {
		k, err := text.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			size += k
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return min(n, size/(2*(6+OCRPixels)-1)), nil
}

// readOCR is ReadOCR with the number of letters expected (0: unknown):
// their features are then made room for at once.
func readOCR(r io.Reader, name string, expect int) (*Corpus, error) {
	br, done, err := ocrText(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer done()
	c := &Corpus{Data: Dataset{Name: name, Labels: OCRLabels, Feat: OCRFeat}}
	d := &c.Data
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	lineNo := 0
	wordStart, wordFold, prevID := 0, -1, 0
	feats := newFeatureBlocks(expect)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			return nil, fmt.Errorf("%s:%d: empty line", name, lineNo)
		}
		l, err := ParseLetter(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if l.ID <= prevID {
			return nil, fmt.Errorf("%s:%d: column 1 (id): ids must increase, got %d after %d", name, lineNo, l.ID, prevID)
		}
		prevID = l.ID
		if wordFold >= 0 && l.Fold != wordFold {
			return nil, fmt.Errorf("%s:%d: column 6 (fold): fold changes inside a word (%d, word started with %d)", name, lineNo, l.Fold, wordFold)
		}
		wordFold = l.Fold
		l.Features(feats.next())
		d.Y = append(d.Y, l.Label)
		if l.NextID == -1 {
			d.Words = append(d.Words, Word{Start: wordStart, Len: len(d.Y) - wordStart})
			c.Folds = append(c.Folds, wordFold)
			wordStart, wordFold = len(d.Y), -1
		} else if l.NextID != l.ID+1 {
			return nil, fmt.Errorf("%s:%d: column 3 (next_id): must be -1 or the next line's id %d, got %d", name, lineNo, l.ID+1, l.NextID)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, lineNo+1, err)
	}
	if wordStart != len(d.Y) {
		return nil, fmt.Errorf("%s:%d: the last word is not terminated (next_id -1)", name, lineNo)
	}
	if len(d.Words) == 0 {
		return nil, fmt.Errorf("%s: no letters", name)
	}
	d.X = feats.join()
	return c, nil
}

// ocrBlock is the number of letters whose features ReadOCR keeps in one
// block while it reads.
const ocrBlock = 4096

// featureBlocks holds the letters' features while a corpus is read: blocks,
// the first of room for the letters expected (at least ocrBlock), the
// others of ocrBlock letters, joined at the end when there are several.
// An array grown by append (53 MB for the whole corpus) copied itself
// about five times over, into freshly allocated pages, which took one to
// two seconds of the read.
type featureBlocks struct {
	full [][]float64
	cur  []float64
}

func newFeatureBlocks(expect int) *featureBlocks {
	return &featureBlocks{cur: make([]float64, 0, max(expect, ocrBlock)*OCRFeat)}
}

// next is the room for the next letter's features.
func (b *featureBlocks) next() []float64 {
	if len(b.cur) == cap(b.cur) {
		b.full = append(b.full, b.cur)
		b.cur = make([]float64, 0, ocrBlock*OCRFeat)
	}
	b.cur = b.cur[:len(b.cur)+OCRFeat]
	return b.cur[len(b.cur)-OCRFeat:]
}

// join is every letter's features in one array.
func (b *featureBlocks) join() []float64 {
	if len(b.full) == 0 {
		return b.cur
	}
	n := len(b.cur)
	for _, f := range b.full {
		n += len(f)
	}
	x := make([]float64, 0, n)
	for _, f := range append(b.full, b.cur) {
		x = append(x, f...)
	}
	return x
}

// Subset returns the words whose fold satisfies keep, as a new Dataset.
func (c *Corpus) Subset(name string, keep func(fold int) bool) *Dataset {
	src := &c.Data
	words, letters := 0, 0
	for i, w := range src.Words {
		if keep(c.Folds[i]) {
			words, letters = words+1, letters+w.Len
		}
	}
	out := &Dataset{Name: name, Labels: src.Labels, Feat: src.Feat,
		X: make([]float64, 0, letters*src.Feat), Y: make([]int, 0, letters), Words: make([]Word, 0, words)}
	for i, w := range src.Words {
		if !keep(c.Folds[i]) {
			continue
		}
		out.Words = append(out.Words, Word{Start: len(out.Y), Len: w.Len})
		out.Y = append(out.Y, src.Y[w.Start:w.Start+w.Len]...)
		out.X = append(out.X, src.X[w.Start*src.Feat:(w.Start+w.Len)*src.Feat]...)
	}
	return out
}

// Split returns the train and test sets: "train" (the paper's split, the
// default) trains on folds 1–9 (n = 6251 words) and tests on fold 0; "small"
// is the reverse.
func (c *Corpus) Split(split string) (train, test *Dataset, err error) {
	f0 := func(f int) bool { return f == 0 }
	rest := func(f int) bool { return f != 0 }
	switch split {
	case "", "train":
		return c.Subset("ocr folds 1-9", rest), c.Subset("ocr fold 0", f0), nil
	case "small":
		return c.Subset("ocr fold 0", f0), c.Subset("ocr folds 1-9", rest), nil
	}
	return nil, nil, fmt.Errorf("split: must be train or small, got %q", split)
}

// EnvOCR names the environment variable that points at the OCR data.
const EnvOCR = "FWLAB_OCR"

// ErrNoData is wrapped by ResolveOCR's error when no data file was found.
var ErrNoData = errors.New("OCR data not found")

// ResolveOCR finds the OCR data file. given (a file or a directory holding
// ocr_letters.tsv.gz) wins; else the environment variable FWLAB_OCR; else the
// first existing ../shared/data/ocr relative to the working directory or one
// of its parents. The error names every path tried.
func ResolveOCR(given string) (string, error) {
	var tried []string
	try := func(p string) (string, bool) {
		st, err := os.Stat(p)
		if err == nil && st.IsDir() {
			p = filepath.Join(p, OCRFile)
			st, err = os.Stat(p)
		}
		tried = append(tried, p)
		return p, err == nil && st.Mode().IsRegular()
	}
	fail := func() error {
		return fmt.Errorf("%w (tried %s); pass the data parameter or set %s", ErrNoData, strings.Join(tried, ", "), EnvOCR)
	}
	if given != "" {
		if p, ok := try(given); ok {
			return p, nil
		}
		return "", fail()
	}
	if env := os.Getenv(EnvOCR); env != "" {
		if p, ok := try(env); ok {
			return p, nil
		}
		return "", fail()
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: working directory: %v", ErrNoData, err)
	}
	for {
		if p, ok := try(filepath.Join(dir, "..", "shared", "data", "ocr")); ok {
			return filepath.Clean(p), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fail()
}

var (
	ocrMu    sync.Mutex
	ocrCache = map[string]*ocrEntry{}
)

type ocrEntry struct {
	once sync.Once
	c    *Corpus
	err  error
}

// LoadOCR resolves the data path (see ResolveOCR) and reads the corpus, once
// per process and path: later calls share the same (read-only) corpus.
func LoadOCR(given string) (*Corpus, error) {
	p, err := ResolveOCR(given)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	ocrMu.Lock()
	e, ok := ocrCache[p]
	if !ok {
		e = &ocrEntry{}
		ocrCache[p] = e
	}
	ocrMu.Unlock()
	e.once.Do(func() {
		f, err := os.Open(p)
		if err != nil {
			e.err = err
			return
		}
		defer f.Close()
		// the lines counted first (decompressed twice: 50 to 100 ms) give
		// the features their room at once
		n, err := ocrLines(f)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			e.err = fmt.Errorf("%s: %w", p, err)
			return
		}
		e.c, e.err = readOCR(f, p, n)
	})
	if e.err != nil {
		// Do not keep a failure: the file may be fixed and read again.
		ocrMu.Lock()
		if ocrCache[p] == e {
			delete(ocrCache, p)
		}
		ocrMu.Unlock()
	}
	return e.c, e.err
}
