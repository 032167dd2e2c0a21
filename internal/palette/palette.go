// Package palette holds the series colours and line styles shared by the
// dashboard's charts (the page loads the same palette.json, served at
// /palette.json) and the figures drawn with gonum/plot: one file, read by
// both, so a series looks the same on screen and on paper.
package palette

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"image/color"
	"strconv"
)

// JSON is palette.json as served to the page.
//
//go:embed palette.json
var JSON []byte

type file struct {
	Colors []string    `json:"colors"`
	Dashes [][]float64 `json:"dashes"`
}

var (
	colors []color.RGBA
	dashes [][]float64
)

func init() {
	var f file
	if err := json.Unmarshal(JSON, &f); err != nil {
		panic(fmt.Sprintf("palette: palette.json: %v", err))
	}
	for i, s := range f.Colors {
		c, err := parseHex(s)
		if err != nil {
			panic(fmt.Sprintf("palette: palette.json: colors[%d]: %v", i, err))
		}
		colors = append(colors, c)
	}
	if len(colors) == 0 || len(f.Dashes) == 0 {
		panic("palette: palette.json: colors and dashes must not be empty")
	}
	dashes = f.Dashes
}

func parseHex(s string) (color.RGBA, error) {
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, fmt.Errorf("%q is not #RRGGBB", s)
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.RGBA{}, fmt.Errorf("%q is not #RRGGBB", s)
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}, nil
}

// Colour returns the i-th series colour (cycling).
func Colour(i int) color.RGBA { return colors[i%len(colors)] }

// Dashes returns the i-th series dash pattern in points (nil: solid),
// cycling.
func Dashes(i int) []float64 { return dashes[i%len(dashes)] }

// Len is the number of colours before they repeat.
func Len() int { return len(colors) }
