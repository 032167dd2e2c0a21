package gflasso

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Edge joins tasks M < L (0-based columns of Y) whose correlation R passed the
// threshold. The penalty uses the weight W = |R| and the sign S = sign(R).
type Edge struct {
	M    int     `json:"m"`
	L    int     `json:"l"`
	R    float64 `json:"r"`
	W    float64 `json:"w"`
	Sign int     `json:"sign"`
}

// Graph is the task graph of a GFLASSO instance.
type Graph struct {
	K int `json:"k"`
	// Corr is the truncated correlation matrix of Y's columns (K×K, row by
	// row): entries with |r| < threshold are 0, the diagonal is 1 (0 for a
	// column without variance).
	Corr [][]float64 `json:"corr"`
	// Edges lists every pair m < l with a nonzero truncated correlation, in
	// the order l ascending, then m ascending (the order of Chen et al.'s
	// code, which walks the upper triangle column by column).
	Edges []Edge `json:"edges"`
	// Components are the connected components (each sorted ascending, the
	// list sorted by smallest task). A task without an edge is its own
	// component.
	Components [][]int `json:"components"`
}

// BuildGraph computes the Pearson correlation of Y's columns, truncates it at
// threshold (|r| < threshold becomes 0) and returns the graph with its
// connected components. A column with zero variance correlates with nothing.
func BuildGraph(Y *mat.Dense, threshold float64) (*Graph, error) {
	n, k := Y.Dims()
	if n < 2 {
		return nil, fmt.Errorf("gflasso: Y needs at least 2 rows to compute correlations, got %d", n)
	}
	if !(threshold >= 0 && threshold <= 1) {
		return nil, optErr("threshold", "must lie in [0, 1], got %v", threshold)
	}
	// Centre and scale every column once.
	cols := make([][]float64, k)
	ok := make([]bool, k)
	for c := 0; c < k; c++ {
		col := make([]float64, n)
		mean := 0.0
		for i := 0; i < n; i++ {
			col[i] = Y.At(i, c)
			mean += col[i]
		}
		mean /= float64(n)
		ss := 0.0
		for i := range col {
			col[i] -= mean
			ss += col[i] * col[i]
		}
		if ss > 0 {
			s := 1 / math.Sqrt(ss)
			for i := range col {
				col[i] *= s
			}
			ok[c] = true
		}
		cols[c] = col
	}
	g := &Graph{K: k, Corr: make([][]float64, k)}
	for m := range g.Corr {
		g.Corr[m] = make([]float64, k)
		if ok[m] {
			g.Corr[m][m] = 1
		}
	}
	for l := 0; l < k; l++ {
		for m := 0; m < l; m++ {
			if !ok[m] || !ok[l] {
				continue
			}
			r := 0.0
			for i := 0; i < n; i++ {
				r += cols[m][i] * cols[l][i]
			}
			r = math.Max(-1, math.Min(1, r))
			if math.Abs(r) < threshold || r == 0 {
				continue
			}
			g.Corr[m][l], g.Corr[l][m] = r, r
			s := 1
			if r < 0 {
				s = -1
			}
			g.Edges = append(g.Edges, Edge{M: m, L: l, R: r, W: math.Abs(r), Sign: s})
		}
	}
	g.Components = components(k, g.Edges)
	return g, nil
}

// components returns the connected components of the graph on k vertices.
func components(k int, edges []Edge) [][]int {
	parent := make([]int, k)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, e := range edges {
		a, b := find(e.M), find(e.L)
		if a != b {
			if a < b {
				parent[b] = a
			} else {
				parent[a] = b
			}
		}
	}
	groups := map[int][]int{}
	for i := 0; i < k; i++ {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	out := make([][]int, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
