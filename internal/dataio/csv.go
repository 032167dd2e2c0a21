// Package dataio reads the data files that fwlab's models import: plain
// comma-separated matrices and vectors (no header) and the svmlight/LIBSVM
// sparse text format. Every error names the file, the line and, where it
// applies, the column, so that a user can find the offending entry.
package dataio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"
)

// ParseError is a malformed entry in a data file. Line and Col are 1-based;
// Col is the byte column where the offending field starts (0 when the error
// concerns the whole line), Line is 0 when it concerns the whole file.
type ParseError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *ParseError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ReadCSV reads a matrix of plain comma-separated numbers: no header, one row
// per line, every row with the same number of columns. Spaces and tabs around
// a number, Windows line ends, a leading byte-order mark and blank lines at
// the end of the file are accepted; a blank line followed by more data,
// an empty field, a field that is not a finite number, a ragged row and an
// empty file are errors naming the file, line and column.
func ReadCSV(path string) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseCSV(f, path)
}

// ReadVector reads a vector stored as one CSV column or one CSV row.
func ReadVector(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseVector(f, path)
}

// ParseVector is ReadVector on a reader; name is used in errors.
func ParseVector(r io.Reader, name string) ([]float64, error) {
	m, err := ParseCSV(r, name)
	if err != nil {
		return nil, err
	}
	rows, cols := m.Dims()
	if rows != 1 && cols != 1 {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("has %d rows and %d columns, want a vector (one column or one row)", rows, cols)}
	}
	out := make([]float64, rows*cols)
	copy(out, m.RawMatrix().Data)
	return out, nil
}

// lineReader yields the lines of a text file without their terminators,
// whatever their length, and drops a leading UTF-8 byte-order mark.
type lineReader struct {
	br   *bufio.Reader
	line int
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line and true, or false at the end of the input
// (lr.err then holds a read error other than io.EOF, if any).
func (lr *lineReader) next() (string, bool) {
	if lr.err != nil {
		return "", false
	}
	s, err := lr.br.ReadString('\n')
	if err != nil {
		if !errors.Is(err, io.EOF) {
			lr.err = err
			return "", false
		}
		if s == "" {
			lr.err = io.EOF
			return "", false
		}
		lr.err = io.EOF // the last line had no terminator
	}
	lr.line++
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	if lr.line == 1 {
		s = strings.TrimPrefix(s, "\uFEFF")
	}
	return s, true
}

func (lr *lineReader) readErr(name string) error {
	if lr.err != nil && !errors.Is(lr.err, io.EOF) {
		return fmt.Errorf("%s: %w", name, lr.err)
	}
	return nil
}

// parseNumber parses a finite float from a trimmed field.
func parseNumber(s string) (float64, bool) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

func isBlank(s string) bool { return strings.Trim(s, " \t") == "" }

// ParseCSV is ReadCSV on a reader; name is used in errors.
func ParseCSV(r io.Reader, name string) (*mat.Dense, error) {
	lr := newLineReader(r)
	var data []float64
	cols, rows := 0, 0
	blankAt := 0 // line number of the first blank line seen, 0 if none
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if isBlank(s) {
			if blankAt == 0 {
				blankAt = lr.line
			}
			continue
		}
		if blankAt != 0 {
			return nil, &ParseError{File: name, Line: blankAt, Msg: fmt.Sprintf("blank line inside the data (more rows follow on line %d)", lr.line)}
		}
		n := 0
		start := 0
		for {
			end := strings.IndexByte(s[start:], ',')
			last := end < 0
			if last {
				end = len(s)
			} else {
				end += start
			}
			field := s[start:end]
			tf := strings.Trim(field, " \t")
			col := start + 1 + (len(field) - len(strings.TrimLeft(field, " \t")))
			n++
			if tf == "" {
				return nil, &ParseError{File: name, Line: lr.line, Col: start + 1, Msg: fmt.Sprintf("field %d is empty, want a number", n)}
			}
			x, ok := parseNumber(tf)
			if !ok {
				return nil, &ParseError{File: name, Line: lr.line, Col: col, Msg: fmt.Sprintf("field %d: %s is not a finite number", n, quote(tf))}
			}
			data = append(data, x)
			if last {
				break
			}
			start = end + 1
		}
		if rows == 0 {
			cols = n
		} else if n != cols {
			return nil, &ParseError{File: name, Line: lr.line, Msg: fmt.Sprintf("has %d columns, want %d like the first row", n, cols)}
		}
		rows++
	}
	if err := lr.readErr(name); err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, &ParseError{File: name, Msg: "empty file: no rows of numbers"}
	}
	return mat.NewDense(rows, cols, data), nil
}

// quote quotes at most 40 characters of a field for an error message,
// escaped, with an ellipsis when the field is longer: an error names the
// place and the rule, it does not echo the file.
func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(string([]rune(s)[:max])) + "…"
}

// WriteRows writes rows of numbers as plain CSV (no header), each number
// in the shortest form that reads back exactly: the format ParseCSV reads,
// what `solve -save-x` and the run page's coefficient download write.
func WriteRows(w io.Writer, rows [][]float64) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for _, row := range rows {
		buf = buf[:0]
		for j, v := range row {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
