package dense

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// paths lists the micro-kernels this machine can run, the plain-Go one
// always (the fallback forced).
func paths() []struct {
	name string
	tile tileFunc
} {
	ps := []struct {
		name string
		tile tileFunc
	}{{"go", tileGo}}
	if path.name != "go" {
		ps = append(ps, path)
	}
	if path.name == "avx2-fma" {
		ps = append(ps, struct {
			name string
			tile tileFunc
		}{"sse2", sseTile()})
	}
	return ps
}

// force runs f with the micro-kernel p.
func force(t *testing.T, name string, tile tileFunc, f func()) {
	t.Helper()
	saved := path
	path.name, path.tile = name, tile
	defer func() { path = saved }()
	f()
}

// general returns a rows×cols matrix with stride cols+pad of standard
// normal entries (the padding too, which must never be read into C).
func general(rng *rand.Rand, rows, cols, pad int) blas64.General {
	st := max(1, cols+pad)
	g := blas64.General{Rows: rows, Cols: cols, Stride: st, Data: make([]float64, rows*st)}
	for i := range g.Data {
		g.Data[i] = rng.NormFloat64()
	}
	return g
}

func clone(g blas64.General) blas64.General {
	g.Data = append([]float64(nil), g.Data...)
	return g
}

// bound is Σ_p |op(A)_ip|·|op(B)_pj| for every (i, j): the scale of the
// rounding errors of any summation order.
func bound(tA, tB blas.Transpose, a, b blas64.General, m, n, k int) []float64 {
	abs := func(g blas64.General) blas64.General {
		g = clone(g)
		for i, v := range g.Data {
			g.Data[i] = math.Abs(v)
		}
		return g
	}
	out := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
	blas64.Gemm(tA, tB, 1, abs(a), abs(b), 0, out)
	return out.Data
}

// TestGemmAgainstGonum compares every path with blas64.Gemm on random
// shapes (odd sizes, sizes below and across the 4×8 tile and the 256-deep
// block, strides wider than the rows), every transpose, several alpha and
// beta: within 1e-13 of Σ_p |a_ip||b_pj| (+ |beta·c_ij|) for every entry.
func TestGemmAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {4, 8, 1}, {3, 5, 7}, {5, 9, 3}, {17, 13, 31}, {4, 8, 256}, {7, 15, 257}, {50, 20, 200}, {33, 50, 513}, {64, 1, 9}, {1, 64, 9}, {8, 16, 0}}
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	coefs := [][2]float64{{1, 0}, {1, 1}, {-0.5, 2}, {2.5, -1}, {0, 3}}
	for _, pth := range paths() {
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tA := range trans {
				for _, tB := range trans {
					for _, ab := range coefs {
						ar, ac := m, k
						if tA == blas.Trans {
							ar, ac = k, m
						}
						br, bc := k, n
						if tB == blas.Trans {
							br, bc = n, k
						}
						a, b := general(rng, ar, ac, rng.IntN(3)), general(rng, br, bc, rng.IntN(3))
						c := general(rng, m, n, rng.IntN(3))
						want, got := clone(c), clone(c)
						blas64.Gemm(tA, tB, ab[0], a, b, ab[1], want)
						force(t, pth.name, pth.tile, func() { Gemm(tA, tB, ab[0], a, b, ab[1], got) })
						bd := bound(tA, tB, a, b, m, n, k)
						for i := 0; i < m; i++ {
							for j := 0; j < c.Stride; j++ {
								w, g := want.Data[i*c.Stride+j], got.Data[i*c.Stride+j]
								if j >= n {
									if g != c.Data[i*c.Stride+j] {
										t.Fatalf("%s %v: wrote into the stride padding", pth.name, sh)
									}
									continue
								}
								tol := 1e-13 * (math.Abs(ab[0])*bd[i*n+j] + math.Abs(ab[1]*c.Data[i*c.Stride+j]))
								if math.Abs(g-w) > tol || math.IsNaN(g) {
									t.Fatalf("%s m,n,k=%v tA=%v tB=%v alpha,beta=%v: C[%d][%d] = %v, gonum %v (tolerance %g)",
										pth.name, sh, tA, tB, ab, i, j, g, w, tol)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmBetaZeroIgnoresC: with beta = 0, NaNs in C are overwritten, as in
// BLAS.
func TestGemmBetaZeroIgnoresC(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := general(rng, 6, 10, 0), general(rng, 10, 11, 0)
	c := general(rng, 6, 11, 0)
	for i := range c.Data {
		c.Data[i] = math.NaN()
	}
	Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c)
	for i, v := range c.Data {
		if math.IsNaN(v) {
			t.Fatalf("C[%d] is NaN after beta = 0", i)
		}
	}
}

// TestGemmReproducible: the same product twice, on every path, gives the
// same bits; the SSE2 path (products and sums rounded apart, the same
// order) gives the plain-Go kernel's bits.
func TestGemmReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a, b := general(rng, 501, 499, 0), general(rng, 499, 51, 0)
	run := func(name string, tile tileFunc) []float64 {
		c := blas64.General{Rows: 501, Cols: 51, Stride: 51, Data: make([]float64, 501*51)}
		force(t, name, tile, func() { Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c) })
		return c.Data
	}
	byPath := map[string][]float64{}
	for _, p := range paths() {
		c1, c2 := run(p.name, p.tile), run(p.name, p.tile)
		for i := range c1 {
			if math.Float64bits(c1[i]) != math.Float64bits(c2[i]) {
				t.Fatalf("%s: entry %d differs between two runs: %v, %v", p.name, i, c1[i], c2[i])
			}
		}
		byPath[p.name] = c1
	}
	if s, ok := byPath["sse2"]; ok {
		g := byPath["go"]
		for i := range g {
			if math.Float64bits(g[i]) != math.Float64bits(s[i]) {
				t.Fatalf("sse2 and go differ at %d: %v, %v", i, s[i], g[i])
			}
		}
	}
}

func TestGemmShapeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on a shape mismatch")
		}
	}()
	rng := rand.New(rand.NewPCG(7, 8))
	Gemm(blas.NoTrans, blas.NoTrans, 1, general(rng, 3, 4, 0), general(rng, 5, 2, 0), 0, general(rng, 3, 2, 0))
}

// TestKernelForced: FWLAB_DENSE_KERNEL=go (or sse2 on amd64) forces that
// path; without it an amd64 machine never runs the plain-Go kernel.
func TestKernelForced(t *testing.T) {
	switch want := os.Getenv("FWLAB_DENSE_KERNEL"); {
	case want == "go" || (want == "sse2" && runtime.GOARCH == "amd64"):
		if Kernel() != want {
			t.Fatalf("FWLAB_DENSE_KERNEL=%s, kernel %s", want, Kernel())
		}
	case runtime.GOARCH == "amd64" && Kernel() == "go":
		t.Fatal("amd64 runs the plain-Go kernel")
	}
}
