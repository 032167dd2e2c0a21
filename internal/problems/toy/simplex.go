package toy

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/fwlab/fwlab/internal/solver"
)

// Simplex is least squares over the probability simplex
// {x ∈ R^p : x ≥ 0, Σ x = 1}, whose vertices are the unit vectors e_j
// (keys "v0", "v1", …).
type Simplex struct{ lsq }

// NewSimplex generates an instance with p coordinates and n samples whose
// minimiser lies in the relative interior of a face with about p/5 vertices.
func NewSimplex(ctx context.Context, p, n int, seed int64) (*Simplex, error) {
	if err := checkSizes(p, n); err != nil {
		return nil, err
	}
	rng := newRand(seed)
	k := max(1, p/5)
	perm := rng.Perm(p)
	xs := make([]float64, p)
	g := make([]float64, p)
	tau := 0.2 * rng.NormFloat64()
	for j := range g {
		g[j] = tau + 0.05 + 0.45*rng.Float64() // off the support: strictly larger
	}
	sum := 0.0
	for _, j := range perm[:k] {
		xs[j] = 0.5 + rng.Float64()
		sum += xs[j]
		g[j] = tau
	}
	for _, j := range perm[:k] {
		xs[j] /= sum
	}
	d, err := newLSQ(ctx, rng, n, xs, g)
	if err != nil {
		return nil, err
	}
	return &Simplex{*d}, nil
}

// NewSimplexData is least squares over the simplex on the user's data: A
// (n×p, row-major in rows, which the problem keeps) and y.
func NewSimplexData(ctx context.Context, rows []float64, n, p int, y []float64) (*Simplex, error) {
	d, err := newLSQData(ctx, rows, n, p, y)
	if err != nil {
		return nil, err
	}
	return &Simplex{*d}, nil
}

// SimplexVertex returns e_j.
func SimplexVertex(j int) solver.Vertex {
	return solver.Vertex{Key: "v" + strconv.Itoa(j), Idx: []int{j}, Val: []float64{1}}
}

// LMO returns e_j for the first j minimising g_j.
func (s *Simplex) LMO(_ int, g []float64) solver.Vertex {
	best, bj := math.Inf(1), 0
	for j, gj := range g {
		if gj < best {
			best, bj = gj, j
		}
	}
	return SimplexVertex(bj)
}

// Start is e_0.
func (s *Simplex) Start(int) solver.Vertex { return SimplexVertex(0) }

// ProxStart is e_0 as a dense vector.
func (s *Simplex) ProxStart() []float64 {
	x := make([]float64, s.p)
	x[0] = 1
	return x
}

// Prox is the Euclidean projection onto the simplex (whatever the step).
func (s *Simplex) Prox(dst, v []float64, _ float64) { ProjectSimplex(dst, v, 1) }

// L1Ball is least squares over {x ∈ R^p : ‖x‖₁ ≤ radius}, whose vertices
// are ±radius·e_j (keys "+j" and "-j").
type L1Ball struct {
	lsq
	radius float64
}

// NewL1Ball generates an instance whose minimiser lies on the sphere
// ‖x‖₁ = radius, in the relative interior of a face with about p/5 vertices.
func NewL1Ball(ctx context.Context, p, n int, radius float64, seed int64) (*L1Ball, error) {
	if err := checkSizes(p, n); err != nil {
		return nil, err
	}
	if !(radius > 0) || math.IsInf(radius, 0) || radius > 1e6 {
		return nil, errField("radius", "must be a number > 0 and ≤ 1e6, got %v", radius)
	}
	rng := newRand(seed)
	xs, g := l1Optimum(rng, p, radius)
	d, err := newLSQ(ctx, rng, n, xs, g)
	if err != nil {
		return nil, err
	}
	return &L1Ball{lsq: *d, radius: radius}, nil
}

// NewL1BallFast generates an instance like NewL1Ball's (minimiser on the
// sphere ‖x‖₁ = radius, about p/5 vertices in its face; not the same data
// for the same seed) in O(n·p) time instead of O(n·p² + p³), for p up to
// n ≤ MaxFastEntries/p: F* is known by construction from a KKT
// certificate (see newLSQFast), and the Lipschitz bound is a power-iteration
// estimate made on first use. n must be at least p.
func NewL1BallFast(ctx context.Context, p, n int, radius float64, seed int64) (*L1Ball, error) {
	if err := checkFastSizes(p, n); err != nil {
		return nil, err
	}
	if !(radius > 0) || math.IsInf(radius, 0) || radius > 1e6 {
		return nil, errField("radius", "must be a number > 0 and ≤ 1e6, got %v", radius)
	}
	rng := newRand(seed)
	xs, g := l1Optimum(rng, p, radius)
	d, err := newLSQFast(ctx, rng, n, xs, g)
	if err != nil {
		return nil, err
	}
	return &L1Ball{lsq: *d, radius: radius}, nil
}

// l1Optimum draws the minimiser xs of an l1-ball instance, on the sphere
// ‖x‖₁ = radius with about p/5 nonzero coordinates of random signs, and
// the gradient g at xs: g_j = −λ·sign(xs_j) on the support and |g_j| < λ
// off it (λ = 0.5), so that −g lies in the interior of the normal cone's
// face at xs (strict complementarity).
func l1Optimum(rng *rand.Rand, p int, radius float64) (xs, g []float64) {
	k := max(1, p/5)
	perm := rng.Perm(p)
	xs = make([]float64, p)
	g = make([]float64, p)
	const lambda = 0.5
	for j := range g {
		g[j] = lambda * (1.6*rng.Float64() - 0.8) // |g_j| < λ off the support
	}
	sum := 0.0
	for _, j := range perm[:k] {
		xs[j] = 0.5 + rng.Float64()
		sum += xs[j]
	}
	for _, j := range perm[:k] {
		xs[j] *= radius / sum
		if rng.IntN(2) == 1 {
			xs[j] = -xs[j]
		}
		g[j] = -lambda * math.Copysign(1, xs[j])
	}
	return xs, g
}

// NewL1BallData is least squares over the l1 ball on the user's data (see
// NewSimplexData).
func NewL1BallData(ctx context.Context, rows []float64, n, p int, y []float64, radius float64) (*L1Ball, error) {
	if !(radius > 0) || math.IsInf(radius, 0) || radius > 1e6 {
		return nil, errField("radius", "must be a number > 0 and ≤ 1e6, got %v", radius)
	}
	d, err := newLSQData(ctx, rows, n, p, y)
	if err != nil {
		return nil, err
	}
	return &L1Ball{lsq: *d, radius: radius}, nil
}

// Radius is the ball's radius.
func (b *L1Ball) Radius() float64 { return b.radius }

// Vertex returns +radius·e_j (neg false, key "+j") or −radius·e_j (key "-j").
func (b *L1Ball) Vertex(j int, neg bool) solver.Vertex {
	if neg {
		return solver.Vertex{Key: "-" + strconv.Itoa(j), Idx: []int{j}, Val: []float64{-b.radius}}
	}
	return solver.Vertex{Key: "+" + strconv.Itoa(j), Idx: []int{j}, Val: []float64{b.radius}}
}

// LMO returns −sign(g_j)·radius·e_j for the first j maximising |g_j|; the
// sign is + when g_j ≤ 0.
func (b *L1Ball) LMO(_ int, g []float64) solver.Vertex {
	best, bj := -1.0, 0
	for j, gj := range g {
		if a := math.Abs(gj); a > best {
			best, bj = a, j
		}
	}
	return b.Vertex(bj, g[bj] > 0)
}

// Start is +radius·e_0.
func (b *L1Ball) Start(int) solver.Vertex { return b.Vertex(0, false) }

// ProxStart is +radius·e_0 as a dense vector.
func (b *L1Ball) ProxStart() []float64 {
	x := make([]float64, b.p)
	x[0] = b.radius
	return x
}

// Prox is the Euclidean projection onto the ball (whatever the step).
func (b *L1Ball) Prox(dst, v []float64, _ float64) { ProjectL1Ball(dst, v, b.radius) }

// Box is least squares over [lo, hi]^p, whose vertices are the corners; a
// corner's key is its pattern of 'l' (lo) and 'h' (hi), one letter per
// coordinate.
type Box struct {
	lsq
	lo, hi float64
}

// NewBox generates an instance whose minimiser has about a third of its
// coordinates at lo, a third at hi and the rest strictly inside.
func NewBox(ctx context.Context, p, n int, lo, hi float64, seed int64) (*Box, error) {
	if err := checkSizes(p, n); err != nil {
		return nil, err
	}
	if err := checkBounds(lo, hi); err != nil {
		return nil, err
	}
	rng := newRand(seed)
	xs := make([]float64, p)
	g := make([]float64, p)
	for j := range xs {
		switch rng.IntN(3) {
		case 0:
			xs[j], g[j] = lo, 0.05+0.45*rng.Float64()
		case 1:
			xs[j], g[j] = hi, -(0.05 + 0.45*rng.Float64())
		default:
			xs[j] = lo + (hi-lo)*(0.2+0.6*rng.Float64())
		}
	}
	d, err := newLSQ(ctx, rng, n, xs, g)
	if err != nil {
		return nil, err
	}
	return &Box{lsq: *d, lo: lo, hi: hi}, nil
}

// NewBoxData is least squares over [lo, hi]^p on the user's data (see
// NewSimplexData).
func NewBoxData(ctx context.Context, rows []float64, n, p int, y []float64, lo, hi float64) (*Box, error) {
	if err := checkBounds(lo, hi); err != nil {
		return nil, err
	}
	d, err := newLSQData(ctx, rows, n, p, y)
	if err != nil {
		return nil, err
	}
	return &Box{lsq: *d, lo: lo, hi: hi}, nil
}

// checkBounds validates the box's bounds.
func checkBounds(lo, hi float64) error {
	if math.IsNaN(lo) || math.Abs(lo) > 1e6 {
		return errField("lo", "must be a number between -1e6 and 1e6, got %v", lo)
	}
	if math.IsNaN(hi) || math.Abs(hi) > 1e6 {
		return errField("hi", "must be a number between -1e6 and 1e6, got %v", hi)
	}
	if !(hi > lo) {
		return errField("hi", "must be greater than lo = %v, got %v", lo, hi)
	}
	return nil
}

// Bounds returns lo and hi.
func (b *Box) Bounds() (lo, hi float64) { return b.lo, b.hi }

// Corner returns the corner with hi where high[j] is true, else lo.
func (b *Box) Corner(high []bool) solver.Vertex {
	key := make([]byte, len(high))
	x := make([]float64, len(high))
	for j, h := range high {
		key[j], x[j] = 'l', b.lo
		if h {
			key[j], x[j] = 'h', b.hi
		}
	}
	return solver.DenseVertex(string(key), x)
}

// LMO picks hi where g_j < 0, else lo (ties: lo).
func (b *Box) LMO(_ int, g []float64) solver.Vertex {
	high := make([]bool, len(g))
	for j, gj := range g {
		high[j] = gj < 0
	}
	return b.Corner(high)
}

// Start is the all-lo corner.
func (b *Box) Start(int) solver.Vertex { return b.Corner(make([]bool, b.p)) }

// ProxStart is the all-lo corner as a dense vector.
func (b *Box) ProxStart() []float64 {
	x := make([]float64, b.p)
	for j := range x {
		x[j] = b.lo
	}
	return x
}

// Prox is the Euclidean projection onto the box (whatever the step).
func (b *Box) Prox(dst, v []float64, _ float64) { ProjectBox(dst, v, b.lo, b.hi) }

var (
	_ solver.Problem          = (*Simplex)(nil)
	_ solver.ProxProblem      = (*Simplex)(nil)
	_ solver.LipschitzBounder = (*Simplex)(nil)
	_ solver.Problem          = (*L1Ball)(nil)
	_ solver.ProxProblem      = (*L1Ball)(nil)
	_ solver.LipschitzBounder = (*L1Ball)(nil)
	_ solver.Problem          = (*Box)(nil)
	_ solver.ProxProblem      = (*Box)(nil)
	_ solver.LipschitzBounder = (*Box)(nil)
	_ solver.Evaluator        = (*Simplex)(nil)
	_ solver.Evaluator        = (*L1Ball)(nil)
	_ solver.Evaluator        = (*Box)(nil)
)
