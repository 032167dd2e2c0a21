package solver

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// Covariance updates (Friedman, Hastie and Tibshirani's glmnet): for the
// squared loss, a coordinate step needs only m_jᵀz, and a move δ of y_k
// changes every m_jᵀz by δ·m_jᵀm_k. With the inner products of the working
// set's columns at hand, a step costs one pass over the working set instead
// of two over the samples (a dot product and an axpy of length N), and the
// residual z is brought up to date only at the next full pass.
//
// Which updates a working set's sweeps use is chosen by shape when a full
// pass makes it: covariance updates when the samples outnumber the working
// set cdCovRatio times over (a step then costs at most 1/cdCovRatio of a
// residual step) and the inner products to keep fit in cdCovMax columns;
// residual updates otherwise, and for a loss other than the squared one,
// whose Newton steps need f'' at every sample. The inner products cost N
// per pair, once: a coordinate's are kept for the rest of the run, so a
// coordinate that leaves the support and comes back costs nothing more.
// Measured on LASSO and box problems (docs/cd.md): 2–27 % less work on
// every instance whose working sets are a small part of the problem, 12 %
// more where the working set is the whole of a tall problem (40 of 40
// coordinates: the inner products then cost as much as twenty sweeps).
// The choice depends only on the state, never on a clock: runs stay a
// function of their spec and seed.

// cdCovRatio is how many times the samples must outnumber the working set
// for covariance updates.
const cdCovRatio = 4

// cdCovMax bounds the coordinates whose inner products are kept (their
// table holds cdCovMax² numbers at most: 32 MiB).
const cdCovMax = 2048

// cdCovOn lets covariance updates be chosen (tests compare them with
// residual updates on the same problem).
var cdCovOn = true

// cdGram holds the inner products m_aᵀm_b of the coordinates kept, in the
// order they entered: at[j] is j's place (−1: not kept), rows[a][b] the
// inner product of the a-th and b-th kept.
type cdGram struct {
	at   []int
	cols []int
	rows [][]float64
}

// sweep sweeps the working set once, with the updates chosen for it, and
// returns the largest move (h_j·δ², in units of the objective).
func (s *cdState) sweep() float64 {
	most := 0.0
	for _, j := range s.set {
		most = math.Max(most, s.sweepStep(j))
	}
	return most
}

// chooseUpdates picks the updates of the working set a full pass just made
// (see the comment above) and, for covariance updates, computes the inner
// products of its coordinates not kept yet. m_jᵀz of its coordinates is
// the full pass's (partial keeps it in q).
func (s *cdState) chooseUpdates() {
	c := s.c
	s.cov = false
	if !cdCovOn || c.Loss != nil || c.N < cdCovRatio*len(s.set) {
		return
	}
	g := &s.gram
	if g.at == nil {
		g.at = make([]int, c.P)
		for j := range g.at {
			g.at[j] = -1
		}
	}
	fresh := 0
	for _, j := range s.set {
		if g.at[j] < 0 {
			fresh++
		}
	}
	if len(g.cols)+fresh > cdCovMax {
		return
	}
	for _, j := range s.set {
		if g.at[j] >= 0 {
			continue
		}
		col := s.col(j)
		row := make([]float64, len(g.cols)+1, len(g.cols)+1+fresh)
		for a, k := range g.cols {
			d := floats.Dot(col, s.col(k))
			row[a] = d
			g.rows[a] = append(g.rows[a], d)
		}
		row[len(g.cols)] = floats.Dot(col, col)
		s.work += float64(len(g.cols)+1) * s.unit
		g.at[j] = len(g.cols)
		g.cols = append(g.cols, j)
		g.rows = append(g.rows, row)
	}
	s.cov = true
}

// sweepStep minimises over coordinate j of the working set, with the
// updates chosen for it, and returns the size of the move as step does.
func (s *cdState) sweepStep(j int) float64 {
	if !s.cov {
		return s.step(j)
	}
	c := s.c
	g := s.q[j] * c.W
	if c.Linear != nil {
		g += c.Linear[j]
	}
	nv, d := s.squaredMove(j, g)
	if d == 0 {
		return 0
	}
	row := s.gram.rows[s.gram.at[j]]
	for _, i := range s.set {
		s.q[i] += d * row[s.gram.at[i]]
	}
	s.work += s.unit * float64(len(s.set)) / float64(c.N)
	s.y[j] = nv
	s.stale = true
	return s.h[j] * d * d
}

// squaredMove returns the minimiser nv of the squared loss's objective
// along coordinate j, whose partial derivative is g, and the move
// d = nv − y_j (0 where the objective does not depend on y_j).
func (s *cdState) squaredMove(j int, g float64) (nv, d float64) {
	c, h := s.c, s.h[j]
	switch {
	case h > 0:
		nv = s.target(j, g, h)
	case c.L1 > 0 || g == 0:
		return s.y[j], 0 // a zero column: S does not depend on y_j
	case g > 0:
		nv = c.Lo
	default:
		nv = c.Hi
	}
	return nv, nv - s.y[j]
}
