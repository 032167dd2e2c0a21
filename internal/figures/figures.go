// Package figures draws fwlab's figures as files (SVG, PNG or PDF) with
// gonum.org/v1/plot. It takes plain data: named series with an optional
// band (median with min–max over replications, say), and heat maps of
// matrices, laid out as panels on a grid. What the panels hold is decided by
// the caller (the paper's figures in the solve command, a run's traces in
// FromRun); the data fed to the plot is a Figure value, which encodes as
// JSON, so tests can pin the numbers without comparing pictures.
package figures

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/palette"
)

// Floats is a list of numbers in which NaN marks a missing value (a gap in
// a line, no band at that abscissa). In JSON a missing value is null.
type Floats []float64

// MarshalJSON writes NaN and infinities as null.
func (f Floats) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (f *Floats) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*f = nil
		return nil
	}
	out := make(Floats, len(raw))
	for i, p := range raw {
		if p == nil {
			out[i] = math.NaN()
		} else {
			out[i] = *p
		}
	}
	*f = out
	return nil
}

// Series is one named curve: Y against X, drawn as a line broken where Y is
// missing, and, when Lo and Hi are given (same length as X), a shaded band
// between them.
type Series struct {
	Name string `json:"name"`
	X    Floats `json:"x"`
	Y    Floats `json:"y"`
	Lo   Floats `json:"lo,omitempty"`
	Hi   Floats `json:"hi,omitempty"`
}

// Lines is a panel of series against a common x-axis. With LogY the
// y-axis is logarithmic (values ≤ 0 are left out).
type Lines struct {
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	LogY   bool     `json:"log_y,omitempty"`
	Series []Series `json:"series"`
}

// Heat is a panel showing a matrix, row 0 at the top, on a diverging colour
// scale symmetric about zero (blue negative, light grey zero, red positive;
// NaN, a missing value, white).
type Heat struct {
	Z [][]float64 `json:"z"`
}

// Panel is one cell of the figure's grid: either Lines or Heat.
type Panel struct {
	Title string `json:"title"`
	Lines *Lines `json:"lines,omitempty"`
	Heat  *Heat  `json:"heat,omitempty"`
}

// Figure is a titled grid of panels, filled row by row, Cols per row.
type Figure struct {
	Title  string  `json:"title"`
	Cols   int     `json:"cols"`
	Panels []Panel `json:"panels"`
}

// Formats are the file formats Render writes.
var Formats = []string{"svg", "png", "pdf"}

// FormatOf returns the format named by a file name's extension.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("the file name must end in .svg, .png or .pdf to choose the figure's format, got %q", filepath.Base(path))
}

// Validate checks that the figure can be drawn: at least one panel, each
// with exactly one of Lines and Heat, series with matching lengths and
// rectangular matrices.
func (f *Figure) Validate() error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("figure: no panels to draw")
	}
	if f.Cols < 0 {
		return fmt.Errorf("figure: cols must be at least 1 (or 0 for a single row), got %d", f.Cols)
	}
	for i, p := range f.Panels {
		if (p.Lines == nil) == (p.Heat == nil) {
			return fmt.Errorf("figure: panel %d (%q) must hold either lines or a heat map", i, p.Title)
		}
		if p.Lines != nil {
			for _, s := range p.Lines.Series {
				if len(s.Y) != len(s.X) {
					return fmt.Errorf("figure: panel %d series %q: %d x values, %d y values", i, s.Name, len(s.X), len(s.Y))
				}
				if (s.Lo == nil) != (s.Hi == nil) || (s.Lo != nil && (len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X))) {
					return fmt.Errorf("figure: panel %d series %q: the band needs lo and hi, each with one value per x", i, s.Name)
				}
			}
		}
		if p.Heat != nil {
			if len(p.Heat.Z) == 0 || len(p.Heat.Z[0]) == 0 {
				return fmt.Errorf("figure: panel %d (%q): empty matrix", i, p.Title)
			}
			for r, row := range p.Heat.Z {
				if len(row) != len(p.Heat.Z[0]) {
					return fmt.Errorf("figure: panel %d (%q): row %d has %d values, row 0 has %d", i, p.Title, r, len(row), len(p.Heat.Z[0]))
				}
			}
		}
	}
	return nil
}

// Colour returns the colour of the i-th series of a panel (the palette
// the dashboard's charts share).
func Colour(i int) color.RGBA { return palette.Colour(i) }
