package solver

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// sepLSQ is a problem of q separable blocks: block b is its own
// least-squares problem sub[b] over a simplex (F is the sum). It splits its
// oracle (vertices in parts of two) and its model updates (samples in parts
// of three) and declares its blocks separable, so that the block methods
// run each block's whole step as one task and idle workers take parts of
// the running blocks.
type sepLSQ struct {
	sub   []*lsqProblem
	dim   int
	pos   []Block
	split atomic.Int64 // calls of a part range short of the whole
	// panicAt: a part of block 1's oracle panics from that call on (0: never)
	panicAt int64
	calls   atomic.Int64
}

func newSepLSQ(q int) *sepLSQ {
	p := &sepLSQ{}
	for b := 0; b < q; b++ {
		s := newLSQFace(uint64(20+b), 40, 5+b%3, 1)
		p.sub = append(p.sub, s)
		p.pos = append(p.pos, Block{Offset: p.dim, Size: s.dim})
		p.dim += s.dim
	}
	return p
}

func (p *sepLSQ) Dim() int              { return p.dim }
func (p *sepLSQ) Samples() int          { return p.sub[0].n }
func (p *sepLSQ) Blocks() []Block       { return p.pos }
func (p *sepLSQ) Start(b int) Vertex    { return p.sub[b].Start(0) }
func (p *sepLSQ) BlocksSeparable() bool { return true }
func (p *sepLSQ) LMO(b int, g []float64) Vertex {
	return p.sub[b].LMO(0, g)
}
func (p *sepLSQ) Objective(x []float64) float64 {
	s := 0.0
	for b, blk := range p.pos {
		s += p.sub[b].Objective(x[blk.Offset : blk.Offset+blk.Size])
	}
	return s
}

// LMOSplit finds the best vertex of each part of two, the lowest index on
// ties, and compares the parts in order: LMO's vertex.
func (p *sepLSQ) LMOSplit(b int, g []float64, par Parallel) Vertex {
	verts := p.sub[b].verts[0]
	np := (len(verts) + 1) / 2
	best := make([]int, np)
	val := make([]float64, np)
	par(np, func(lo, hi int) {
		if lo > 0 || hi < np {
			p.split.Add(1)
		}
		if b == 1 && p.panicAt > 0 && p.calls.Add(1) >= p.panicAt {
			panic("part broke")
		}
		for q := lo; q < hi; q++ {
			best[q], val[q] = -1, 0
			for i := 2 * q; i < min(2*q+2, len(verts)); i++ {
				if d := dot(verts[i], g); best[q] < 0 || d < val[q] {
					best[q], val[q] = i, d
				}
			}
		}
	})
	bi := 0
	for q := 1; q < np; q++ {
		if val[q] < val[bi] {
			bi = q
		}
	}
	return p.sub[b].vertex(0, best[bi])
}

type sepModel struct {
	p   *sepLSQ
	sub []*lsqModel
}

func (p *sepLSQ) NewModel(x []float64) Model {
	m := &sepModel{p: p}
	for b, blk := range p.pos {
		m.sub = append(m.sub, p.sub[b].NewModel(x[blk.Offset:blk.Offset+blk.Size]).(*lsqModel))
	}
	return m
}

func (m *sepModel) xb(b int, x []float64) []float64 {
	blk := m.p.pos[b]
	return x[blk.Offset : blk.Offset+blk.Size]
}
func (m *sepModel) Reset(x []float64) {
	for b, s := range m.sub {
		s.Reset(m.xb(b, x))
	}
}
func (m *sepModel) Scale(b int, s float64)         { m.sub[b].Scale(0, s) }
func (m *sepModel) Add(b int, c float64, v Vertex) { m.sub[b].Add(0, c, v) }
func (m *sepModel) Gradient(b int, g, x []float64, batch []int) {
	m.sub[b].Gradient(0, g, m.xb(b, x), batch)
}
func (m *sepModel) Line(b int, x []float64, d Direction, batch []int) Line {
	return m.sub[b].Line(0, m.xb(b, x), d, batch)
}

// MoveSplit updates the samples in parts of three, each entry as Scale and
// Add do.
func (m *sepModel) MoveSplit(b int, s, c float64, v Vertex, par Parallel) {
	sm := m.sub[b]
	z := sm.zb[0]
	np := (len(z) + 2) / 3
	par(np, func(lo, hi int) {
		if lo > 0 || hi < np {
			m.p.split.Add(1)
		}
		for i := 3 * lo; i < min(3*hi, len(z)); i++ {
			if s != 1 {
				z[i] *= s
			}
			z[i] += c * v.Dot(sm.row(i, 0))
		}
	})
}

// plainSep is sepLSQ without the splitting and without the declaration:
// the engine runs it as it runs any problem of several blocks.
type plainSep struct{ p *sepLSQ }

func (q plainSep) Dim() int                      { return q.p.Dim() }
func (q plainSep) Samples() int                  { return q.p.Samples() }
func (q plainSep) Blocks() []Block               { return q.p.Blocks() }
func (q plainSep) Start(b int) Vertex            { return q.p.Start(b) }
func (q plainSep) LMO(b int, g []float64) Vertex { return q.p.LMO(b, g) }
func (q plainSep) Objective(x []float64) float64 { return q.p.Objective(x) }
func (q plainSep) NewModel(x []float64) Model    { return plainModel{q.p.NewModel(x).(*sepModel)} }

type plainModel struct{ m *sepModel }

func (m plainModel) Reset(x []float64)              { m.m.Reset(x) }
func (m plainModel) Scale(b int, s float64)         { m.m.Scale(b, s) }
func (m plainModel) Add(b int, c float64, v Vertex) { m.m.Add(b, c, v) }
func (m plainModel) Gradient(b int, g, x []float64, batch []int) {
	m.m.Gradient(b, g, x, batch)
}
func (m plainModel) Line(b int, x []float64, d Direction, batch []int) Line {
	return m.m.Line(b, x, d, batch)
}

// Separable blocks whose steps run as one task each, with their oracles and
// model updates split into parts that idle workers take: the trace is the
// same bit for bit for any number of workers, and the same as the plain
// two-phase schedule of the same problem without splitting.
func TestSplitBlockStepsReproducible(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newSepLSQ(5)
	for _, algo := range []string{"bc-ssfw-as", "bcfw", "ssfw-as"} {
		run := func(prob Problem, workers int) []Record {
			cfg := Config{Algorithm: algo, Workers: workers, Limits: limits(120), Seed: 3}
			if algo != "bcfw" {
				cfg.Schedule = Schedule{Kind: "paper", Rho: 0.2, Alpha: 0.5}
			}
			var rec collect
			if _, err := mustNew(t, prob, cfg).Run(context.Background(), &rec); err != nil {
				t.Fatal(err)
			}
			return stripTime(rec.recs)
		}
		ref := run(plainSep{p}, 1)
		if len(ref) < 50 {
			t.Fatalf("%s: %d records", algo, len(ref))
		}
		for _, w := range []int{1, 2, 3, 7} {
			if got := run(p, w); !reflect.DeepEqual(got, ref) {
				t.Fatalf("%s, %d workers: the split schedule changes the trace", algo, w)
			}
		}
	}
	if p.split.Load() == 0 {
		t.Fatal("no part range was ever split: idle workers never helped")
	}
}

// A panic in a part of a block's split oracle, wherever it runs, fails the
// run with its message instead of ending the process, and leaves no worker
// behind.
func TestSplitPartPanicFailsTheRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, w := range []int{2, 4} {
		p := newSepLSQ(5)
		p.panicAt = 7
		m := mustNew(t, p, Config{Algorithm: "bcfw", Workers: w, Limits: Limits{MaxIters: 50, EvalEvery: 100}})
		res, err := m.Run(context.Background(), &collect{})
		if err != nil || res.Summary.Status != StatusFailed || !contains(res.Summary.Message, "part broke") {
			t.Fatalf("%d workers: err %v, summary %+v", w, err, res.Summary)
		}
	}
}
