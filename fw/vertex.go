package fw

// Vertex is an extreme point of one block's polytope, in block-local
// coordinates, stored sparsely. Key is a stable identity computed from the
// oracle's discrete choice (never from floating-point coordinates), so an
// active set recognises a vertex it already holds. Idx is strictly increasing.
type Vertex struct {
	Key string
	Idx []int
	Val []float64
}

// Dot returns <g, v> for a dense block-local vector g.
func (v Vertex) Dot(g []float64) float64 {
	s := 0.0
	for i, j := range v.Idx {
		s += v.Val[i] * g[j]
	}
	return s
}

// AddTo performs dst += c·v on a dense block-local vector.
func (v Vertex) AddTo(dst []float64, c float64) {
	for i, j := range v.Idx {
		dst[j] += c * v.Val[i]
	}
}

// SqNorm returns ‖v‖².
func (v Vertex) SqNorm() float64 {
	s := 0.0
	for _, x := range v.Val {
		s += x * x
	}
	return s
}

// DenseVertex builds a vertex from dense coordinates, keeping the nonzeros.
func DenseVertex(key string, x []float64) Vertex {
	v := Vertex{Key: key}
	for i, xi := range x {
		if xi != 0 {
			v.Idx = append(v.Idx, i)
			v.Val = append(v.Val, xi)
		}
	}
	return v
}

// Block is a contiguous range x[Offset : Offset+Size] of the variable, with
// its own polytope and oracle. A problem of Algorithm 1 has a single block.
type Block struct {
	// Offset is the block's first coordinate in x.
	Offset int
	// Size is the number of the block's coordinates.
	Size int
}
