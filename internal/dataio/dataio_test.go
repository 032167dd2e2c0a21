package dataio

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func td(name string) string { return filepath.Join("testdata", name) }

func TestReadCSV(t *testing.T) {
	m, err := ReadCSV(td("good.csv"))
	if err != nil {
		t.Fatal(err)
	}
	r, c := m.Dims()
	if r != 2 || c != 3 {
		t.Fatalf("dims %d×%d, want 2×3", r, c)
	}
	want := []float64{1, 2, 3, 4, 5, 6}
	for i, w := range want {
		if got := m.At(i/3, i%3); got != w {
			t.Errorf("entry %d = %v, want %v", i, got, w)
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct {
		file string
		want string // the exact error text
	}{
		{"notnum.csv", td("notnum.csv") + `:2:3: field 2: "abc" is not a finite number`},
		{"ragged.csv", td("ragged.csv") + `:2: has 2 columns, want 3 like the first row`},
		{"empty.csv", td("empty.csv") + `: empty file: no rows of numbers`},
		{"gap.csv", td("gap.csv") + `:2: blank line inside the data (more rows follow on line 3)`},
		{"emptyfield.csv", td("emptyfield.csv") + `:1:3: field 2 is empty, want a number`},
		{"nan.csv", td("nan.csv") + `:1:3: field 2: "NaN" is not a finite number`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, err := ReadCSV(td(c.file))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != c.want {
				t.Errorf("error %q, want %q", err, c.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
		})
	}
	if _, err := ReadCSV(td("missing.csv")); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: error %v does not name the file", err)
	}
}

func TestReadVector(t *testing.T) {
	for _, c := range []struct {
		file string
		want []float64
	}{
		{"col.csv", []float64{1, 2, 3}},
		{"row.csv", []float64{1, 2, 3}},
	} {
		got, err := ReadVector(td(c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s: %v, want %v", c.file, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %v, want %v", c.file, got, c.want)
			}
		}
	}
	_, err := ReadVector(td("good.csv"))
	if err == nil || err.Error() != td("good.csv")+": has 2 rows and 3 columns, want a vector (one column or one row)" {
		t.Errorf("matrix as vector: error %v", err)
	}
}

func TestReadSVMLight(t *testing.T) {
	s, err := ReadSVMLight(td("good.svm"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows() != 3 || s.Dim != 4 {
		t.Fatalf("rows %d dim %d, want 3 and 4", s.Rows(), s.Dim)
	}
	wantY := []float64{1, -1, 0}
	for i, y := range wantY {
		if s.Labels[i] != y {
			t.Errorf("label %d = %v, want %v", i, s.Labels[i], y)
		}
	}
	m, err := s.Dense(s.Dim)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0.5, 0, -2, 0}, {0, 1.5, 0, 0}, {0, 0, 0, 1e-3}}
	for i := range want {
		for j := range want[i] {
			if m.At(i, j) != want[i][j] {
				t.Errorf("X[%d][%d] = %v, want %v", i, j, m.At(i, j), want[i][j])
			}
		}
	}
	if _, err := s.Dense(2); err == nil {
		t.Error("Dense narrower than Dim: no error")
	}
}

func TestReadSVMLightErrors(t *testing.T) {
	cases := []struct{ file, want string }{
		{"decreasing.svm", td("decreasing.svm") + ":2:8: feature index 2 is not greater than the previous index 3 (indices must increase)"},
		{"zero.svm", td("zero.svm") + `:1:4: feature index "0" is not a whole number ≥ 1 (indices are 1-based)`},
		{"badval.svm", td("badval.svm") + `:2:6: value "x" of feature 2 is not a finite number`},
		{"badlabel.svm", td("badlabel.svm") + `:1:1: label "yes" is not a finite number`},
		{"empty.svm", td("empty.svm") + ": empty file: no examples"},
		{"nocolon.svm", td("nocolon.svm") + `:1:8: "2" is not an index:value pair`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, err := ReadSVMLight(td(c.file))
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// formatCSV writes rows back as CSV with exact (shortest round-trip) numbers.
func formatCSV(rows [][]float64) string {
	var b strings.Builder
	for _, r := range rows {
		for j, x := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "1\n", "", "1,2\n3\n", "\uFEFF1.5e3, -2\r\n\n", "a,b", "1,,2", "1\n\n2\n", strings.Repeat("\x00", 5000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseCSV(bytes.NewReader(in), "f.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("error %q does not name the file", err)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes echoes the input: %.300q", len(err.Error()), err)
			}
			return
		}
		r, c := m.Dims()
		if r < 1 || c < 1 {
			t.Fatalf("accepted with dims %d×%d", r, c)
		}
		rows := make([][]float64, r)
		for i := range rows {
			rows[i] = make([]float64, c)
			for j := range rows[i] {
				x := m.At(i, j)
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("accepted a non-finite entry %v", x)
				}
				rows[i][j] = x
			}
		}
		m2, err := ParseCSV(strings.NewReader(formatCSV(rows)), "g.csv")
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		if !equalDense(m.RawMatrix().Data, m2.RawMatrix().Data) {
			t.Fatal("round trip changed the values")
		}
	})
}

func equalDense(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzReadSVMLight(f *testing.F) {
	for _, s := range []string{"+1 1:0.5 3:-2\n-1 qid:3 2:1\n", "# c\n", "1 0:1", "1 2:1 1:1", "0 5:1e300 # x\n\n", "1 x:1", "-1\t1:2\t7:3", strings.Repeat("\x00", 5000), "1 1:" + strings.Repeat("9", 500) + "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseSVMLight(bytes.NewReader(in), "f.svm")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.svm") {
				t.Fatalf("error %q does not name the file", err)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes echoes the input: %.300q", len(err.Error()), err)
			}
			return
		}
		if s.Rows() == 0 || len(s.Idx) != s.Rows() || len(s.Val) != s.Rows() {
			t.Fatalf("inconsistent result: %d labels, %d index rows, %d value rows", s.Rows(), len(s.Idx), len(s.Val))
		}
		var b strings.Builder
		for i := range s.Labels {
			prev := -1
			b.WriteString(strconv.FormatFloat(s.Labels[i], 'g', -1, 64))
			for k, j := range s.Idx[i] {
				if j <= prev || j >= s.Dim {
					t.Fatalf("row %d: index %d after %d with Dim %d", i, j, prev, s.Dim)
				}
				if s.Val[i][k] == 0 || math.IsNaN(s.Val[i][k]) || math.IsInf(s.Val[i][k], 0) {
					t.Fatalf("row %d: stored value %v", i, s.Val[i][k])
				}
				prev = j
				b.WriteString(" " + strconv.Itoa(j+1) + ":" + strconv.FormatFloat(s.Val[i][k], 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		s2, err := ParseSVMLight(strings.NewReader(b.String()), "g.svm")
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		for i := range s.Labels {
			if s2.Labels[i] != s.Labels[i] || !equalDense(s2.Val[i], s.Val[i]) || len(s2.Idx[i]) != len(s.Idx[i]) {
				t.Fatalf("round trip changed row %d", i)
			}
		}
	})
}
