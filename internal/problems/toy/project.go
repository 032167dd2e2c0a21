package toy

import (
	"math"
	"sort"
)

// ProjectSimplex writes into dst the Euclidean projection of v onto the
// scaled simplex {x ≥ 0, Σ x = radius} (radius > 0), by the sort-based
// method: x = max(v − θ, 0) with θ chosen so that the sum is radius.
// dst and v may alias.
func ProjectSimplex(dst, v []float64, radius float64) {
	u := append([]float64(nil), v...)
	sort.Sort(sort.Reverse(sort.Float64Slice(u)))
	theta := 0.0
	sum := 0.0
	for j, uj := range u {
		sum += uj
		t := (sum - radius) / float64(j+1)
		if uj-t > 0 {
			theta = t
		}
	}
	for i, vi := range v {
		dst[i] = math.Max(vi-theta, 0)
	}
}

// ProjectL1Ball writes into dst the Euclidean projection of v onto
// {‖x‖₁ ≤ radius} (radius > 0): v itself when inside, otherwise the
// soft-thresholding of v whose magnitudes are the simplex projection of |v|
// (Duchi, Shalev-Shwartz, Singer and Chandra, 2008). dst and v may alias.
func ProjectL1Ball(dst, v []float64, radius float64) {
	n1 := 0.0
	for _, vi := range v {
		n1 += math.Abs(vi)
	}
	if n1 <= radius {
		copy(dst, v)
		return
	}
	a := make([]float64, len(v))
	for i, vi := range v {
		a[i] = math.Abs(vi)
	}
	ProjectSimplex(a, a, radius)
	for i, vi := range v {
		dst[i] = math.Copysign(a[i], vi)
		if a[i] == 0 {
			dst[i] = 0
		}
	}
}

// ProjectBox writes into dst the Euclidean projection of v onto [lo, hi]^p:
// the coordinate-wise clip. dst and v may alias.
func ProjectBox(dst, v []float64, lo, hi float64) {
	for i, vi := range v {
		dst[i] = math.Min(math.Max(vi, lo), hi)
	}
}

// ProjectPolygon writes into dst (length 2) the Euclidean projection of the
// point v onto the convex polygon with counter-clockwise vertices verts
// (at least 3, as ConvexHull returns them): v itself when it lies inside,
// otherwise the nearest point over the edges, each in closed form.
func ProjectPolygon(dst, v []float64, verts [][2]float64) {
	x, y := v[0], v[1]
	m := len(verts)
	inside := true
	for k := 0; k < m; k++ {
		a, b := verts[k], verts[(k+1)%m]
		if cross(b[0]-a[0], b[1]-a[1], x-a[0], y-a[1]) < 0 {
			inside = false
			break
		}
	}
	if inside {
		dst[0], dst[1] = x, y
		return
	}
	best := math.Inf(1)
	var px, py float64
	for k := 0; k < m; k++ {
		a, b := verts[k], verts[(k+1)%m]
		qx, qy := segmentPoint(a, b, x, y, 1, 0, 1)
		if d := (x-qx)*(x-qx) + (y-qy)*(y-qy); d < best {
			best, px, py = d, qx, qy
		}
	}
	dst[0], dst[1] = px, py
}

// segmentPoint returns the point of the segment [a, b] nearest to (x, y) in
// the metric of the symmetric positive definite matrix [[q11, q12], [q12, q22]].
// The endpoints are returned exactly when the minimiser is clamped.
func segmentPoint(a, b [2]float64, x, y, q11, q12, q22 float64) (float64, float64) {
	ex, ey := b[0]-a[0], b[1]-a[1]
	rx, ry := x-a[0], y-a[1]
	den := ex*(q11*ex+q12*ey) + ey*(q12*ex+q22*ey)
	num := ex*(q11*rx+q12*ry) + ey*(q12*rx+q22*ry)
	t := num / den
	switch {
	case !(t > 0):
		return a[0], a[1]
	case t >= 1:
		return b[0], b[1]
	}
	return a[0] + t*ex, a[1] + t*ey
}

func cross(ax, ay, bx, by float64) float64 { return ax*by - ay*bx }
