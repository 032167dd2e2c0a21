package toy

import "github.com/fwlab/fwlab/internal/solver"

// Coords describes least squares over the box to coordinate descent
// (solver.CoordProblem): (1/n)·Σ ½(a_iᵀx − y_i)² over the columns of A, R
// the indicator of [lo, hi]^p, which separates over the coordinates.
func (b *Box) Coords() solver.Coords {
	return solver.Coords{N: b.n, P: b.p, Cols: b.cols, W: 1 / float64(b.n), Target: b.y, Lo: b.lo, Hi: b.hi}
}

var _ solver.CoordProblem = (*Box)(nil)
