package dense

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

const (
	mr = 4   // rows of the register tile
	nr = 8   // columns of the register tile (one packed panel)
	kc = 256 // depth of one packed block of op(B)
)

// tileFunc adds alpha·Σ_{p<k} a[r·rs + p·ks]·b[p·8 + j] to c[r·ldc + j] for
// the rows r < 4 and columns j < 8 of one register tile; b is a packed
// panel (eight values per p), rs, ks and ldc are in elements.
type tileFunc func(k int, a []float64, rs, ks int, b []float64, c []float64, ldc int, alpha float64)

// path is the micro-kernel in use, chosen once at start (tests may force
// another).
var path = struct {
	name string
	tile tileFunc
}{"go", tileGo}

// Kernel names the micro-kernel this machine runs: "avx2-fma", "sse2" or
// "go".
func Kernel() string { return path.name }

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, as
// blas64.Gemm does (with beta = 0, C's old values are not read). It panics
// on shapes that do not match, as blas64.Gemm does: a programming error.
func Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	m, k := a.Rows, a.Cols
	if tA != blas.NoTrans {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if tB != blas.NoTrans {
		kb, n = n, kb
	}
	if k != kb || c.Rows != m || c.Cols != n {
		panic(fmt.Sprintf("dense: Gemm shapes %d×%d by %d×%d into %d×%d", m, k, kb, n, c.Rows, c.Cols))
	}
	scale(c, beta)
	if alpha == 0 || k == 0 || m == 0 || n == 0 {
		return
	}
	// op(A)[i][p] = a.Data[i·rs + p·ks].
	rs, ks := a.Stride, 1
	if tA != blas.NoTrans {
		rs, ks = 1, a.Stride
	}
	np := (n + nr - 1) / nr
	pb := make([]float64, min(k, kc)*np*nr)
	var edge [mr * nr]float64
	pa := make([]float64, mr*min(k, kc)) // the last rows of op(A), padded
	for p0 := 0; p0 < k; p0 += kc {
		d := min(kc, k-p0)
		packB(pb[:d*np*nr], tB, b, p0, d, n)
		i := 0
		for ; i+mr <= m; i += mr {
			ai := a.Data[i*rs+p0*ks:]
			for jp := 0; jp < np; jp++ {
				bp := pb[jp*d*nr : (jp+1)*d*nr]
				j := jp * nr
				if j+nr <= n {
					path.tile(d, ai, rs, ks, bp, c.Data[i*c.Stride+j:], c.Stride, alpha)
					continue
				}
				edge = [mr * nr]float64{}
				path.tile(d, ai, rs, ks, bp, edge[:], nr, alpha)
				addEdge(c, i, j, mr, n-j, edge[:])
			}
		}
		if i == m {
			continue
		}
		// The last m−i < 4 rows: copied into a zeroed 4×d block.
		rows := m - i
		clear(pa)
		for r := 0; r < rows; r++ {
			for p := 0; p < d; p++ {
				pa[r*d+p] = a.Data[(i+r)*rs+(p0+p)*ks]
			}
		}
		for jp := 0; jp < np; jp++ {
			edge = [mr * nr]float64{}
			path.tile(d, pa, d, 1, pb[jp*d*nr:(jp+1)*d*nr], edge[:], nr, alpha)
			addEdge(c, i, jp*nr, rows, min(nr, n-jp*nr), edge[:])
		}
	}
}

// scale sets C = beta·C (C = 0 when beta is 0).
func scale(c blas64.General, beta float64) {
	if beta == 1 {
		return
	}
	for i := 0; i < c.Rows; i++ {
		row := c.Data[i*c.Stride : i*c.Stride+c.Cols]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packB copies rows p0..p0+d of op(B) into panels of eight columns: panel
// jp holds, for each p < d, op(B)[p0+p][8jp .. 8jp+8], zero past column n.
func packB(dst []float64, tB blas.Transpose, b blas64.General, p0, d, n int) {
	np := (n + nr - 1) / nr
	for jp := 0; jp < np; jp++ {
		panel := dst[jp*d*nr : (jp+1)*d*nr]
		j0 := jp * nr
		w := min(nr, n-j0)
		for p := 0; p < d; p++ {
			out := panel[p*nr : (p+1)*nr]
			if tB == blas.NoTrans {
				copy(out, b.Data[(p0+p)*b.Stride+j0:(p0+p)*b.Stride+j0+w])
			} else {
				for j := 0; j < w; j++ {
					out[j] = b.Data[(j0+j)*b.Stride+p0+p]
				}
			}
			clear(out[w:])
		}
	}
}

// addEdge adds the first rows×cols of a 4×8 tile to C at (i, j).
func addEdge(c blas64.General, i, j, rows, cols int, t []float64) {
	for r := 0; r < rows; r++ {
		row := c.Data[(i+r)*c.Stride+j : (i+r)*c.Stride+j+cols]
		for q := range row {
			row[q] += t[r*nr+q]
		}
	}
}

// tileGo is the plain-Go micro-kernel: products and sums rounded apart,
// p in increasing order.
func tileGo(k int, a []float64, rs, ks int, b []float64, c []float64, ldc int, alpha float64) {
	var acc [mr][nr]float64
	for p := 0; p < k; p++ {
		bp := (*[nr]float64)(b[p*nr : p*nr+nr])
		for r := 0; r < mr; r++ {
			ar := a[r*rs+p*ks]
			t := &acc[r]
			for j := 0; j < nr; j++ {
				t[j] += ar * bp[j]
			}
		}
	}
	for r := 0; r < mr; r++ {
		row := c[r*ldc : r*ldc+nr]
		for j := range row {
			row[j] += alpha * acc[r][j]
		}
	}
}
