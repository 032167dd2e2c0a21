package dense

import (
	"os"

	"golang.org/x/sys/cpu"
)

func init() {
	// FWLAB_DENSE_KERNEL=sse2 or go forces a slower path (for tests of
	// the fallbacks on a machine with AVX2).
	force := os.Getenv("FWLAB_DENSE_KERNEL")
	switch {
	case force == "go":
	case force != "sse2" && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		path.name, path.tile = "avx2-fma", tileAVX2
	default: // every amd64 CPU has SSE2
		path.name, path.tile = "sse2", tileSSE2
	}
}

// tileAVX2 is tileGo with 256-bit fused multiply-adds.
func tileAVX2(k int, a []float64, rs, ks int, b []float64, c []float64, ldc int, alpha float64) {
	if k <= 0 {
		return
	}
	_ = a[3*rs+(k-1)*ks]
	_ = b[k*nr-1]
	_ = c[3*ldc+nr-1]
	tile4x8AVX2(k, &a[0], rs, ks, &b[0], &c[0], ldc, alpha)
}

// tileSSE2 is tileGo with 128-bit multiplies and adds (rounded apart, as
// tileGo), one half of the panel at a time.
func tileSSE2(k int, a []float64, rs, ks int, b []float64, c []float64, ldc int, alpha float64) {
	if k <= 0 {
		return
	}
	_ = a[3*rs+(k-1)*ks]
	_ = b[k*nr-1]
	_ = c[3*ldc+nr-1]
	tile4x4SSE2(k, &a[0], rs, ks, &b[0], &c[0], ldc, alpha)
	tile4x4SSE2(k, &a[0], rs, ks, &b[4], &c[4], ldc, alpha)
}

//go:noescape
func tile4x8AVX2(k int, a *float64, rs, ks int, b *float64, c *float64, ldc int, alpha float64)

//go:noescape
func tile4x4SSE2(k int, a *float64, rs, ks int, b *float64, c *float64, ldc int, alpha float64)
