package toy

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/spec"
)

// Limits of user-given polygons.
const (
	MaxPoints = 10000 // points in the points parameter
	MaxCoord  = 1e6   // largest allowed |coordinate|
)

func errField(field, format string, args ...any) error {
	return spec.Errorf(field, format, args...)
}

// ParsePoints parses "x1,y1;x2,y2;…" (spaces allowed around numbers, a
// trailing ';' allowed). Errors name the field "points" and the entry.
func ParsePoints(s string) ([][2]float64, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, ";")
	if strings.TrimSpace(s) == "" {
		return nil, errField("points", "needs at least 3 points written x1,y1;x2,y2;x3,y3")
	}
	parts := strings.Split(s, ";")
	if len(parts) > MaxPoints {
		return nil, errField("points", "at most %d points, got %d", MaxPoints, len(parts))
	}
	pts := make([][2]float64, 0, len(parts))
	for k, part := range parts {
		xy := strings.Split(part, ",")
		if len(xy) != 2 {
			return nil, errField("points", "point %d (%q) must be two numbers x,y separated by a comma", k+1, strings.TrimSpace(part))
		}
		var pt [2]float64
		for c, txt := range xy {
			txt = strings.TrimSpace(txt)
			v, err := strconv.ParseFloat(txt, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errField("points", "point %d: %q is not a finite number", k+1, txt)
			}
			if math.Abs(v) > MaxCoord {
				return nil, errField("points", "point %d: coordinates must lie between -%g and %g, got %v", k+1, MaxCoord, MaxCoord, v)
			}
			pt[c] = v
		}
		pts = append(pts, pt)
	}
	if len(pts) < 3 {
		return nil, errField("points", "needs at least 3 points, got %d", len(pts))
	}
	return pts, nil
}

// ConvexHull returns the vertices of the convex hull of pts in
// counter-clockwise order, starting from the lowest point of smallest x,
// without duplicates or collinear points (Andrew's monotone chain). It is an
// error (naming the field "points") when fewer than 3 points are given or
// when they are all (nearly) collinear: the hull's area must exceed 1e-12
// times the squared extent of the points.
func ConvexHull(pts [][2]float64) ([][2]float64, error) {
	if len(pts) < 3 {
		return nil, errField("points", "needs at least 3 points, got %d", len(pts))
	}
	for k, p := range pts {
		if math.IsNaN(p[0]) || math.IsNaN(p[1]) || math.Abs(p[0]) > MaxCoord || math.Abs(p[1]) > MaxCoord {
			return nil, errField("points", "point %d: coordinates must be finite numbers between -%g and %g", k+1, MaxCoord, MaxCoord)
		}
	}
	ps := append([][2]float64(nil), pts...)
	sort.Slice(ps, func(i, j int) bool {
		if ps[i][0] != ps[j][0] {
			return ps[i][0] < ps[j][0]
		}
		return ps[i][1] < ps[j][1]
	})
	turn := func(o, a, b [2]float64) float64 { return cross(a[0]-o[0], a[1]-o[1], b[0]-o[0], b[1]-o[1]) }
	h := make([][2]float64, 0, 2*len(ps))
	for _, p := range ps { // lower hull
		for len(h) >= 2 && turn(h[len(h)-2], h[len(h)-1], p) <= 0 {
			h = h[:len(h)-1]
		}
		h = append(h, p)
	}
	lower := len(h) + 1
	for i := len(ps) - 2; i >= 0; i-- { // upper hull
		p := ps[i]
		for len(h) >= lower && turn(h[len(h)-2], h[len(h)-1], p) <= 0 {
			h = h[:len(h)-1]
		}
		h = append(h, p)
	}
	h = h[:len(h)-1] // the first point is repeated at the end
	ext := 0.0
	for _, p := range ps {
		ext = math.Max(ext, math.Max(math.Abs(p[0]-ps[0][0]), math.Abs(p[1]-ps[0][1])))
	}
	if len(h) < 3 || polygonArea(h) <= 1e-12*ext*ext {
		return nil, errField("points", "the points are all collinear (or coincide): their convex hull has no area")
	}
	return h, nil
}

// polygonArea is the signed area (positive for counter-clockwise order).
func polygonArea(v [][2]float64) float64 {
	s := 0.0
	for k := range v {
		a, b := v[k], v[(k+1)%len(v)]
		s += a[0]*b[1] - a[1]*b[0]
	}
	return s / 2
}
