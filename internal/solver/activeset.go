package solver

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// ActiveSet is the vertex representation (U, μ) of one block's iterate:
// x_b = Σ μ_v v with μ ≥ 0, Σ μ = 1. It implements the vertex representation
// update of the paper's Algorithm 2. Vertices are recognised by Key.
type ActiveSet struct {
	verts []Vertex
	w     []float64
	index map[string]int
}

// NewActiveSet returns U = {v}, μ_v = 1.
func NewActiveSet(v Vertex) *ActiveSet {
	return &ActiveSet{verts: []Vertex{v}, w: []float64{1}, index: map[string]int{v.Key: 0}}
}

// Len is |U|.
func (a *ActiveSet) Len() int { return len(a.verts) }

// Vertex returns the i-th active vertex and its weight.
func (a *ActiveSet) Vertex(i int) (Vertex, float64) { return a.verts[i], a.w[i] }

// Weight returns μ_v for a key (0 when v is not active).
func (a *ActiveSet) Weight(key string) float64 {
	if i, ok := a.index[key]; ok {
		return a.w[i]
	}
	return 0
}

// Away returns the index of the active vertex maximising <g, v> (the away
// vertex), ties to the lowest index.
func (a *ActiveSet) Away(g []float64) (int, float64) {
	best, bv := 0, math.Inf(-1)
	for i, v := range a.verts {
		if d := v.Dot(g); d > bv {
			best, bv = i, d
		}
	}
	return best, bv
}

// remove deletes entry i, keeping the order of the others (so that tie rules
// stay stable).
func (a *ActiveSet) remove(i int) {
	delete(a.index, a.verts[i].Key)
	copy(a.verts[i:], a.verts[i+1:])
	copy(a.w[i:], a.w[i+1:])
	a.verts = a.verts[:len(a.verts)-1]
	a.w = a.w[:len(a.w)-1]
	for j := i; j < len(a.verts); j++ {
		a.index[a.verts[j].Key] = j
	}
}

// add inserts v with weight w (v not active).
func (a *ActiveSet) add(v Vertex, w float64) {
	a.index[v.Key] = len(a.verts)
	a.verts = append(a.verts, v)
	a.w = append(a.w, w)
}

// FWUpdate applies x ← (1−γ)x + γp: μ ← (1−γ)μ, μ_p += γ; γ = 1 collapses U
// to {p}. It returns whether the set collapsed.
func (a *ActiveSet) FWUpdate(p Vertex, gamma float64) bool {
	if gamma >= 1 {
		for k := range a.index {
			delete(a.index, k)
		}
		a.verts = append(a.verts[:0], p)
		a.w = append(a.w[:0], 1)
		a.index[p.Key] = 0
		return true
	}
	for i := range a.w {
		a.w[i] *= 1 - gamma
	}
	if i, ok := a.index[p.Key]; ok {
		a.w[i] += gamma
	} else {
		a.add(p, gamma)
	}
	return false
}

// AwayUpdate applies x ← (1+γ)x − γu for active vertex i: μ ← (1+γ)μ,
// μ_u −= γ; with drop set (γ = γ_max) u leaves U exactly.
func (a *ActiveSet) AwayUpdate(i int, gamma float64, drop bool) {
	for j := range a.w {
		a.w[j] *= 1 + gamma
	}
	if drop {
		a.remove(i)
		return
	}
	a.w[i] -= gamma
}

// PairwiseUpdate moves weight γ from active vertex i to p; with drop set
// (γ = μ_u) u leaves U exactly.
func (a *ActiveSet) PairwiseUpdate(p Vertex, i int, gamma float64, drop bool) {
	u := a.verts[i].Key
	if j, ok := a.index[p.Key]; ok {
		a.w[j] += gamma
	} else {
		a.add(p, gamma)
	}
	i = a.index[u]
	if drop {
		a.remove(i)
		return
	}
	a.w[i] -= gamma
}

// Cleanup removes weights at or below tol (and any negative rounding
// residue), renormalising the rest to sum to one. It returns how many
// vertices it removed.
func (a *ActiveSet) Cleanup(tol float64) int {
	removed := 0
	for i := 0; i < len(a.w); {
		if a.w[i] <= tol && len(a.w) > 1 {
			a.remove(i)
			removed++
			continue
		}
		i++
	}
	if removed > 0 {
		s := 0.0
		for _, w := range a.w {
			s += w
		}
		for i := range a.w {
			a.w[i] /= s
		}
	}
	return removed
}

// Sum returns Σ μ.
func (a *ActiveSet) Sum() float64 {
	s := 0.0
	for _, w := range a.w {
		s += w
	}
	return s
}

// Point writes Σ μ_v v into dst (block-local, overwritten).
func (a *ActiveSet) Point(dst []float64) {
	for i := range dst {
		dst[i] = 0
	}
	for i, v := range a.verts {
		v.AddTo(dst, a.w[i])
	}
}

// Caratheodory reduces U to at most dim+1 affinely independent vertices
// without changing Σ μ_v v: while the vertices are affinely dependent
// (Σ λ_v v = 0, Σ λ_v = 0, λ ≠ 0), move the weights along λ until one
// reaches zero and drop it. It returns how many vertices it removed.
func (a *ActiveSet) Caratheodory(dim int) int {
	removed := 0
	for len(a.verts) > dim+1 {
		m := len(a.verts)
		// M = [v_1 … v_m; 1 … 1], (dim+1) × m, with m > dim+1: a null vector exists.
		M := mat.NewDense(dim+1, m, nil)
		for j, v := range a.verts {
			for k, idx := range v.Idx {
				M.Set(idx, j, v.Val[k])
			}
			M.Set(dim, j, 1)
		}
		var svd mat.SVD
		if !svd.Factorize(M, mat.SVDFull) {
			return removed
		}
		var V mat.Dense
		svd.VTo(&V)
		lam := mat.Col(nil, m-1, &V) // right singular vector of the smallest singular value (rank ≤ dim+1 < m)
		// step t = min over λ_j > 0 of μ_j/λ_j; μ ← μ − tλ.
		t, jmin := math.Inf(1), -1
		for j, l := range lam {
			if l > 1e-14 {
				if r := a.w[j] / l; r < t {
					t, jmin = r, j
				}
			}
		}
		if jmin < 0 {
			for j := range lam {
				lam[j] = -lam[j]
			}
			for j, l := range lam {
				if l > 1e-14 {
					if r := a.w[j] / l; r < t {
						t, jmin = r, j
					}
				}
			}
		}
		if jmin < 0 {
			return removed
		}
		for j := range a.w {
			a.w[j] -= t * lam[j]
			if a.w[j] < 0 {
				a.w[j] = 0
			}
		}
		a.w[jmin] = 0
		a.remove(jmin)
		removed++
		s := a.Sum()
		for j := range a.w {
			a.w[j] /= s
		}
	}
	return removed
}
