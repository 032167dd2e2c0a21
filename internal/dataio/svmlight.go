package dataio

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// SVMLight is a labelled sparse data set in svmlight/LIBSVM text format.
// Row i has label Labels[i] and nonzero features Idx[i][k] (0-based,
// strictly increasing) with values Val[i][k]. Dim is the largest 1-based
// feature index in the file, i.e. the number of feature columns.
type SVMLight struct {
	Labels []float64
	Idx    [][]int
	Val    [][]float64
	Dim    int
}

// Rows returns the number of examples.
func (s *SVMLight) Rows() int { return len(s.Labels) }

// Dense returns the features as a Rows()×cols dense matrix; cols must be at
// least Dim (pass Dim for the file's own width).
func (s *SVMLight) Dense(cols int) (*mat.Dense, error) {
	if cols < s.Dim || cols <= 0 {
		return nil, fmt.Errorf("svmlight: %d columns requested, but the data has features up to index %d", cols, s.Dim)
	}
	m := mat.NewDense(len(s.Labels), cols, nil)
	for i := range s.Labels {
		for k, j := range s.Idx[i] {
			m.Set(i, j, s.Val[i][k])
		}
	}
	return m, nil
}

// ReadSVMLight reads an svmlight/LIBSVM file: one example per line,
// "label index:value index:value ...", indices 1-based and strictly
// increasing, a "qid:n" token (ranking data) ignored, everything after '#'
// a comment; blank and comment-only lines are skipped. Errors name the file,
// line and column.
func ReadSVMLight(path string) (*SVMLight, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSVMLight(f, path)
}

// ParseSVMLight is ReadSVMLight on a reader; name is used in errors.
func ParseSVMLight(r io.Reader, name string) (*SVMLight, error) {
	lr := newLineReader(r)
	out := &SVMLight{}
	for {
		s, ok := lr.next()
		if !ok {
			break
		}
		if c := strings.IndexByte(s, '#'); c >= 0 {
			s = s[:c]
		}
		fail := func(col int, format string, args ...any) error {
			return &ParseError{File: name, Line: lr.line, Col: col, Msg: fmt.Sprintf(format, args...)}
		}
		var idx []int
		var val []float64
		tok := 0
		last := 0 // last 1-based index seen on this line
		for pos := 0; pos < len(s); {
			if s[pos] == ' ' || s[pos] == '\t' {
				pos++
				continue
			}
			end := pos
			for end < len(s) && s[end] != ' ' && s[end] != '\t' {
				end++
			}
			t := s[pos:end]
			col := pos + 1
			pos = end
			tok++
			if tok == 1 {
				y, ok := parseNumber(t)
				if !ok {
					return nil, fail(col, "label %s is not a finite number", quote(t))
				}
				out.Labels = append(out.Labels, y)
				continue
			}
			colon := strings.IndexByte(t, ':')
			if colon < 0 {
				return nil, fail(col, "%s is not an index:value pair", quote(t))
			}
			key, vs := t[:colon], t[colon+1:]
			if key == "qid" {
				if tok != 2 {
					return nil, fail(col, "qid must come right after the label")
				}
				if _, err := strconv.ParseInt(vs, 10, 64); err != nil {
					return nil, fail(col, "qid %s is not a whole number", quote(vs))
				}
				continue
			}
			j, err := strconv.Atoi(key)
			if err != nil || j < 1 {
				return nil, fail(col, "feature index %s is not a whole number ≥ 1 (indices are 1-based)", quote(key))
			}
			if j <= last {
				return nil, fail(col, "feature index %d is not greater than the previous index %d (indices must increase)", j, last)
			}
			if j > 1<<30 {
				return nil, fail(col, "feature index %d is too large", j)
			}
			x, ok := parseNumber(vs)
			if !ok {
				return nil, fail(col+colon+1, "value %s of feature %d is not a finite number", quote(vs), j)
			}
			last = j
			if x == 0 {
				continue
			}
			idx = append(idx, j-1)
			val = append(val, x)
		}
		if tok == 0 {
			continue
		}
		if last > out.Dim {
			out.Dim = last
		}
		out.Idx = append(out.Idx, idx)
		out.Val = append(out.Val, val)
	}
	if err := lr.readErr(name); err != nil {
		return nil, err
	}
	if len(out.Labels) == 0 {
		return nil, &ParseError{File: name, Msg: "empty file: no examples"}
	}
	return out, nil
}
