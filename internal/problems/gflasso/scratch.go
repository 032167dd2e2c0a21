package gflasso

import (
	"strconv"
	"sync"

	"github.com/fwlab/fwlab/internal/solver"
)

// Steady-state iterations allocate nothing: the oracle's and the slack
// collapse's buffers come from a pool, and the vertices they return from a
// per-block cache (a vertex is immutable, so runs on the same instance share
// them).

// scratch is the working memory of one oracle call or one collapse.
type scratch struct {
	pat, piece, mags []float64
	sums             []float64
	bound            []float64
	comp, stack      []int
	key              []byte
}

func (p *Problem) getScratch() *scratch {
	if s, ok := p.pool.Get().(*scratch); ok {
		return s
	}
	kmax, kenum, nr := 1, 1, p.J
	for _, c := range p.comps {
		kmax = max(kmax, len(c.tasks))
		if c.enumerated() {
			kenum = max(kenum, len(c.tasks))
		}
	}
	s := &scratch{
		pat: make([]float64, kmax), piece: make([]float64, kmax), mags: make([]float64, 0, kmax),
		bound: make([]float64, nr),
		comp:  make([]int, kmax), stack: make([]int, 0, kmax), key: make([]byte, 0, kmax+24),
	}
	s.sums = make([]float64, 1<<kenum)
	return s
}

func (p *Problem) putScratch(s *scratch) { p.pool.Put(s) }

// maxCachedVertices bounds the vertex cache of one block.
const maxCachedVertices = 1 << 14

// vertexCache holds one block's vertices by key.
type vertexCache struct {
	mu sync.RWMutex
	m  map[string]solver.Vertex
}

// atomKey writes the key of T_b·(e_row ⊗ σ/ω(σ), 1) into buf: the row, ':'
// and one character per task ('+', '-', '0').
func atomKey(buf []byte, row int, pat []float64) []byte {
	buf = strconv.AppendInt(buf[:0], int64(row), 10)
	buf = append(buf, ':')
	for _, s := range pat {
		switch {
		case s > 0:
			buf = append(buf, '+')
		case s < 0:
			buf = append(buf, '-')
		default:
			buf = append(buf, '0')
		}
	}
	return buf
}

// cachedAtom returns the vertex T_b·(e_row ⊗ σ/ω(σ), 1), from the block's
// cache when it holds it (key is scratch for its key).
func (p *Problem) cachedAtom(b, row int, pat []float64, key []byte) solver.Vertex {
	key = atomKey(key, row, pat)
	vc := &p.vcache[b]
	vc.mu.RLock()
	v, ok := vc.m[string(key)]
	vc.mu.RUnlock()
	if ok {
		return v
	}
	v = p.atomVertex(b, row, pat)
	vc.mu.Lock()
	if old, ok := vc.m[v.Key]; ok {
		v = old
	} else if len(vc.m) < maxCachedVertices {
		if vc.m == nil {
			vc.m = map[string]solver.Vertex{}
		}
		vc.m[v.Key] = v
	}
	vc.mu.Unlock()
	return v
}
