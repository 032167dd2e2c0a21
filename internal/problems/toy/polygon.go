package toy

import (
	"math"
	"strconv"

	"github.com/fwlab/fwlab/internal/solver"
)

// Limits of the polygon problem's parameters.
const (
	MaxVertices       = 1000
	MaxPolygonSamples = 100000
	MaxCond           = 1e6
	MaxNoise          = 100.0
)

// Targets: where the centre of the quadratic is placed.
const (
	TargetOutside = "outside" // beyond a vertex: the optimum is that vertex
	TargetEdge    = "edge"    // beyond an edge: the optimum is inside that edge
	TargetInside  = "inside"  // in the interior: the optimum is the centre
	TargetCustom  = "custom"  // at (CX, CY)
)

// PolygonConfig describes a polygon instance.
type PolygonConfig struct {
	// Vertices is the vertex count of a regular polygon (circumradius 1,
	// centred at 0, a vertex at (1, 0)); used when Points is empty.
	Vertices int
	// Points "x1,y1;x2,y2;…": the polygon is their convex hull.
	Points string
	// Target places the centre c: outside, edge, inside or custom.
	Target string
	// CX, CY: the centre for the custom target.
	CX, CY float64
	// Cond ≥ 1 is the condition number of Q.
	Cond float64
	// Samples n ≥ 1 and Noise ≥ 0: the centres c_i = c + Noise·(ξ_i − ξ̄)
	// with ξ_i standard normal, recentred so that their mean is c.
	Samples int
	Noise   float64
}

// Polygon is F(x) = (1/n) Σ_i ½(x − c_i)ᵀQ(x − c_i) over a 2-D convex
// polygon, Q = R·diag(1, cond)·Rᵀ with R a rotation by a seeded angle. Its
// vertices have keys "v0", "v1", … in counter-clockwise order.
type Polygon struct {
	verts  [][2]float64
	vx     []solver.Vertex
	q      [3]float64   // q11, q12, q22
	c      [2]float64   // the placed centre
	cs     [][2]float64 // sample centres c_i
	qc     [][2]float64 // Q c_i
	cbar   [2]float64   // mean of the c_i
	qcbar  [2]float64   // Q c̄
	offset float64      // (1/n) Σ ½(c_i − c̄)ᵀQ(c_i − c̄)
	xstar  [2]float64
	fstar  float64
	start  int
	lip    float64
	target string
	angle  float64
}

// NewPolygon builds a polygon instance; the seed drives the rotation of Q,
// the choice of the target vertex or edge and the sample noise.
func NewPolygon(cfg PolygonConfig, seed int64) (*Polygon, error) {
	var verts [][2]float64
	if cfg.Points != "" {
		pts, err := ParsePoints(cfg.Points)
		if err != nil {
			return nil, err
		}
		if verts, err = ConvexHull(pts); err != nil {
			return nil, err
		}
	} else {
		if cfg.Vertices < 3 || cfg.Vertices > MaxVertices {
			return nil, errField("vertices", "must be a whole number between 3 and %d, got %d", MaxVertices, cfg.Vertices)
		}
		verts = RegularPolygon(cfg.Vertices)
	}
	if !(cfg.Cond >= 1 && cfg.Cond <= MaxCond) {
		return nil, errField("cond", "must be a number ≥ 1 and ≤ %g, got %v", MaxCond, cfg.Cond)
	}
	if cfg.Samples < 1 || cfg.Samples > MaxPolygonSamples {
		return nil, errField("samples", "must be a whole number between 1 and %d, got %d", MaxPolygonSamples, cfg.Samples)
	}
	if !(cfg.Noise >= 0 && cfg.Noise <= MaxNoise) {
		return nil, errField("noise", "must be a number ≥ 0 and ≤ %g, got %v", MaxNoise, cfg.Noise)
	}
	rng := newRand(seed)
	pg := &Polygon{verts: verts, target: cfg.Target, lip: cfg.Cond * (1 + 1e-12)}
	pg.angle = math.Pi * rng.Float64()
	cs, sn := math.Cos(pg.angle), math.Sin(pg.angle)
	// Q = R diag(1, cond) Rᵀ with R = [[cos, −sin], [sin, cos]].
	pg.q = [3]float64{cs*cs + cfg.Cond*sn*sn, (1 - cfg.Cond) * cs * sn, sn*sn + cfg.Cond*cs*cs}
	m := len(verts)
	switch cfg.Target {
	case TargetOutside:
		k := rng.IntN(m)
		n1, n2 := pg.outerNormal((k+m-1)%m), pg.outerNormal(k)
		dir := [2]float64{n1[0] + n2[0], n1[1] + n2[1]}
		l := math.Hypot(dir[0], dir[1])
		pg.c = pg.offsetBy(verts[k], 0.5*pg.scale()/l, dir)
	case TargetEdge:
		k := rng.IntN(m)
		a, b := verts[k], verts[(k+1)%m]
		mid := [2]float64{a[0] + 0.4*(b[0]-a[0]), a[1] + 0.4*(b[1]-a[1])}
		pg.c = pg.offsetBy(mid, 0.5*pg.scale(), pg.outerNormal(k))
	case TargetInside:
		var avg [2]float64
		for _, v := range verts {
			avg[0] += v[0] / float64(m)
			avg[1] += v[1] / float64(m)
		}
		v := verts[rng.IntN(m)]
		pg.c = [2]float64{0.7*avg[0] + 0.3*v[0], 0.7*avg[1] + 0.3*v[1]}
	case TargetCustom:
		for _, f := range []struct {
			name string
			v    float64
		}{{"cx", cfg.CX}, {"cy", cfg.CY}} {
			if math.IsNaN(f.v) || math.Abs(f.v) > MaxCoord {
				return nil, errField(f.name, "must be a number between -%g and %g, got %v", MaxCoord, MaxCoord, f.v)
			}
		}
		pg.c = [2]float64{cfg.CX, cfg.CY}
	default:
		return nil, errField("target", "must be one of outside, edge, inside, custom, got %q", cfg.Target)
	}
	n := cfg.Samples
	xi := make([][2]float64, n)
	var mean [2]float64
	for i := range xi {
		xi[i] = [2]float64{rng.NormFloat64(), rng.NormFloat64()}
		mean[0] += xi[i][0] / float64(n)
		mean[1] += xi[i][1] / float64(n)
	}
	pg.cs = make([][2]float64, n)
	pg.qc = make([][2]float64, n)
	for i := range xi {
		c := [2]float64{pg.c[0] + cfg.Noise*(xi[i][0]-mean[0]), pg.c[1] + cfg.Noise*(xi[i][1]-mean[1])}
		pg.cs[i] = c
		pg.qc[i] = pg.mulQ(c)
		pg.cbar[0] += c[0] / float64(n)
		pg.cbar[1] += c[1] / float64(n)
	}
	pg.qcbar = pg.mulQ(pg.cbar)
	for _, c := range pg.cs {
		pg.offset += pg.quad(c[0]-pg.cbar[0], c[1]-pg.cbar[1]) / float64(n)
	}
	pg.xstar = pg.qProject(pg.cbar)
	pg.fstar = pg.quad(pg.xstar[0]-pg.cbar[0], pg.xstar[1]-pg.cbar[1]) + pg.offset
	pg.vx = make([]solver.Vertex, m)
	for k, v := range verts {
		pg.vx[k] = solver.DenseVertex("v"+strconv.Itoa(k), v[:])
	}
	worst := math.Inf(-1)
	for k, v := range verts {
		if f := pg.Objective(v[:]); f > worst {
			worst, pg.start = f, k
		}
	}
	return pg, nil
}

// RegularPolygon returns the m vertices of the regular m-gon of
// circumradius 1 centred at 0, counter-clockwise from (1, 0).
func RegularPolygon(m int) [][2]float64 {
	v := make([][2]float64, m)
	for k := range v {
		s, c := math.Sincos(2 * math.Pi * float64(k) / float64(m))
		v[k] = [2]float64{c, s}
	}
	return v
}

// scale is the polygon's circumradius about its vertex average.
func (pg *Polygon) scale() float64 {
	var avg [2]float64
	for _, v := range pg.verts {
		avg[0] += v[0] / float64(len(pg.verts))
		avg[1] += v[1] / float64(len(pg.verts))
	}
	r := 0.0
	for _, v := range pg.verts {
		r = math.Max(r, math.Hypot(v[0]-avg[0], v[1]-avg[1]))
	}
	return r
}

// outerNormal is the outward unit normal of edge k (from vertex k to k+1).
func (pg *Polygon) outerNormal(k int) [2]float64 {
	a, b := pg.verts[k], pg.verts[(k+1)%len(pg.verts)]
	dx, dy := b[0]-a[0], b[1]-a[1]
	l := math.Hypot(dx, dy)
	return [2]float64{dy / l, -dx / l}
}

// offsetBy returns p + t·Q⁻¹n, so that Q(result − p) = t·n: a centre whose
// Q-metric projection is p when n lies in the normal cone at p.
func (pg *Polygon) offsetBy(p [2]float64, t float64, n [2]float64) [2]float64 {
	det := pg.q[0]*pg.q[2] - pg.q[1]*pg.q[1]
	ux := (pg.q[2]*n[0] - pg.q[1]*n[1]) / det
	uy := (-pg.q[1]*n[0] + pg.q[0]*n[1]) / det
	return [2]float64{p[0] + t*ux, p[1] + t*uy}
}

func (pg *Polygon) mulQ(x [2]float64) [2]float64 {
	return [2]float64{pg.q[0]*x[0] + pg.q[1]*x[1], pg.q[1]*x[0] + pg.q[2]*x[1]}
}

// quad is ½ dᵀQd.
func (pg *Polygon) quad(dx, dy float64) float64 {
	return 0.5 * (pg.q[0]*dx*dx + 2*pg.q[1]*dx*dy + pg.q[2]*dy*dy)
}

// inside reports whether p lies in the closed polygon.
func (pg *Polygon) inside(p [2]float64) bool {
	m := len(pg.verts)
	for k := 0; k < m; k++ {
		a, b := pg.verts[k], pg.verts[(k+1)%m]
		if cross(b[0]-a[0], b[1]-a[1], p[0]-a[0], p[1]-a[1]) < 0 {
			return false
		}
	}
	return true
}

// qProject is the Q-metric projection of p onto the polygon, by brute force:
// p itself when inside, else the best of the closed-form minimisers over
// every edge (vertices included as the edges' endpoints).
func (pg *Polygon) qProject(p [2]float64) [2]float64 {
	if pg.inside(p) {
		return p
	}
	best := math.Inf(1)
	var out [2]float64
	m := len(pg.verts)
	for k := 0; k < m; k++ {
		x, y := segmentPoint(pg.verts[k], pg.verts[(k+1)%m], p[0], p[1], pg.q[0], pg.q[1], pg.q[2])
		if f := pg.quad(x-p[0], y-p[1]); f < best {
			best, out = f, [2]float64{x, y}
		}
	}
	return out
}

// Dim is 2.
func (pg *Polygon) Dim() int { return 2 }

// Samples is n.
func (pg *Polygon) Samples() int { return len(pg.cs) }

// Blocks is the single block [0, 2).
func (pg *Polygon) Blocks() []solver.Block { return []solver.Block{{Offset: 0, Size: 2}} }

// Vertices returns the polygon's vertices in counter-clockwise order.
func (pg *Polygon) Vertices() [][2]float64 { return append([][2]float64(nil), pg.verts...) }

// Vertex returns vertex k with its key "vk" (a fresh copy: callers may
// keep or modify it).
func (pg *Polygon) Vertex(k int) solver.Vertex {
	v := pg.vx[k]
	return solver.Vertex{Key: v.Key, Idx: append([]int(nil), v.Idx...), Val: append([]float64(nil), v.Val...)}
}

// LMO returns the first vertex (in counter-clockwise order) minimising <g, v>.
func (pg *Polygon) LMO(_ int, g []float64) solver.Vertex {
	best, bk := math.Inf(1), 0
	for k, v := range pg.verts {
		if s := g[0]*v[0] + g[1]*v[1]; s < best {
			best, bk = s, k
		}
	}
	return pg.Vertex(bk)
}

// Start is the vertex with the largest objective (the first such), so that
// runs start far from the optimum.
func (pg *Polygon) Start(int) solver.Vertex { return pg.Vertex(pg.start) }

// Extra reports the distance of x to the exact minimiser (the solver adds
// the coordinates and active weights of 2-D iterates itself).
func (pg *Polygon) Extra(x []float64) map[string]float64 {
	return map[string]float64{"dist_xstar": math.Hypot(x[0]-pg.xstar[0], x[1]-pg.xstar[1])}
}

// Objective is (1/n) Σ_i ½(x − c_i)ᵀQ(x − c_i), summed directly.
func (pg *Polygon) Objective(x []float64) float64 {
	s := 0.0
	for _, c := range pg.cs {
		s += pg.quad(x[0]-c[0], x[1]-c[1])
	}
	return s / float64(len(pg.cs))
}

// FStar is the exact optimal value.
func (pg *Polygon) FStar() float64 { return pg.fstar }

// XStar is the exact minimiser: the Q-metric projection of c̄.
func (pg *Polygon) XStar() []float64 { return []float64{pg.xstar[0], pg.xstar[1]} }

// Q returns Q as a 2×2 matrix.
func (pg *Polygon) Q() [2][2]float64 { return [2][2]float64{{pg.q[0], pg.q[1]}, {pg.q[1], pg.q[2]}} }

// Center returns c̄, the mean of the sample centres: F(x) = ½(x − c̄)ᵀQ(x − c̄) + Offset().
func (pg *Polygon) Center() []float64 { return []float64{pg.cbar[0], pg.cbar[1]} }

// Offset is F's value at c̄ (the spread of the sample centres).
func (pg *Polygon) Offset() float64 { return pg.offset }

// LipschitzBound is λ_max(Q) = cond.
func (pg *Polygon) LipschitzBound() float64 { return pg.lip }

// SmoothLipschitz is the same bound, for the proximal view.
func (pg *Polygon) SmoothLipschitz() float64 { return pg.lip }

// ProxDim is 2.
func (pg *Polygon) ProxDim() int { return 2 }

// ProxStart is the start vertex as a fresh slice.
func (pg *Polygon) ProxStart() []float64 {
	v := pg.verts[pg.start]
	return []float64{v[0], v[1]}
}

// Smooth returns F(y) and writes ∇F(y) = Q(y − c̄) into grad.
func (pg *Polygon) Smooth(y, grad []float64) float64 {
	qy := pg.mulQ([2]float64{y[0], y[1]})
	grad[0], grad[1] = qy[0]-pg.qcbar[0], qy[1]-pg.qcbar[1]
	return pg.Objective(y)
}

// Prox is the Euclidean projection onto the polygon (whatever the step).
func (pg *Polygon) Prox(dst, v []float64, _ float64) { ProjectPolygon(dst, v, pg.verts) }

// Lift copies y into x: the coordinates coincide.
func (pg *Polygon) Lift(x, y []float64) { copy(x, y) }

// Geometry is the teaching view's panel: enough to draw the polygon, the
// objective's level sets (F(x) = ½(x − center)ᵀQ(x − center) + offset) and
// the optimum, with the vertex keys in the order of vertices.
func (pg *Polygon) Geometry() map[string]any {
	vs := make([][]float64, len(pg.verts))
	keys := make([]string, len(pg.verts))
	for k, v := range pg.verts {
		vs[k] = []float64{v[0], v[1]}
		keys[k] = pg.vx[k].Key
	}
	return map[string]any{
		"vertices": vs,
		"keys":     keys,
		"Q":        [][]float64{{pg.q[0], pg.q[1]}, {pg.q[1], pg.q[2]}},
		"center":   []float64{pg.cbar[0], pg.cbar[1]},
		"offset":   pg.offset,
		"xstar":    []float64{pg.xstar[0], pg.xstar[1]},
		"fstar":    pg.fstar,
		"target":   pg.target,
	}
}

// NewModel returns a model maintaining u = Qx.
func (pg *Polygon) NewModel(x []float64) solver.Model {
	m := &polyModel{pg: pg}
	m.Reset(x)
	return m
}

type polyModel struct {
	pg *Polygon
	u  [2]float64 // Q x
}

func (m *polyModel) Reset(x []float64) { m.u = m.pg.mulQ([2]float64{x[0], x[1]}) }

func (m *polyModel) Scale(_ int, s float64) { m.u[0] *= s; m.u[1] *= s }

func (m *polyModel) Add(_ int, c float64, v solver.Vertex) {
	var w [2]float64
	v.AddTo(w[:], c)
	qw := m.pg.mulQ(w)
	m.u[0] += qw[0]
	m.u[1] += qw[1]
}

// Gradient is Qx − mean_{i∈batch} Qc_i (all samples when batch is nil); an
// empty non-nil batch gives the zero vector.
func (m *polyModel) Gradient(_ int, g []float64, _ []float64, batch []int) {
	if batch == nil {
		g[0], g[1] = m.u[0]-m.pg.qcbar[0], m.u[1]-m.pg.qcbar[1]
		return
	}
	if len(batch) == 0 {
		g[0], g[1] = 0, 0
		return
	}
	var s [2]float64
	for _, i := range batch {
		s[0] += m.pg.qc[i][0]
		s[1] += m.pg.qc[i][1]
	}
	inv := 1 / float64(len(batch))
	g[0], g[1] = m.u[0]-s[0]*inv, m.u[1]-s[1]*inv
}

// Line is exact: every sample has Hessian Q, so the curvature is dᵀQd and
// φ(γ) − φ(0) = γ·g_Bᵀd + ½γ²·dᵀQd with g_B the batch gradient.
func (m *polyModel) Line(b int, x []float64, d solver.Direction, batch []int) solver.Line {
	dv := [2]float64{d.XCoef * x[0], d.XCoef * x[1]}
	for _, t := range d.Terms {
		t.V.AddTo(dv[:], t.Coef)
	}
	var g [2]float64
	m.Gradient(b, g[:], x, batch)
	if batch != nil && len(batch) == 0 {
		return quadLine{}
	}
	return quadLine{slope: g[0]*dv[0] + g[1]*dv[1], curv: 2 * m.pg.quad(dv[0], dv[1])}
}

var (
	_ solver.Problem          = (*Polygon)(nil)
	_ solver.ProxProblem      = (*Polygon)(nil)
	_ solver.LipschitzBounder = (*Polygon)(nil)
	_ solver.Evaluator        = (*Polygon)(nil)
)
