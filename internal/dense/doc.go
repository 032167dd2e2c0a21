// Package dense holds the blocked matrix product behind the solvers' dense
// products (GFLASSO's SPG: J×J by J×K, N×J by J×K and their transposes),
// without cgo.
//
// Gemm has the semantics of gonum's blas64.Gemm on row-major matrices. It
// packs op(B) into panels of eight columns, k in blocks of 256, and runs a
// 4×8 register-tile micro-kernel over four rows of op(A) read in place:
// Go assembly with AVX2 and fused multiply-adds on amd64 CPUs that have
// them (checked once at start with golang.org/x/sys/cpu, which also checks
// that the operating system saves the YMM registers), SSE2 on other amd64
// CPUs, and plain Go elsewhere. Which one runs is Kernel(); the
// environment variable FWLAB_DENSE_KERNEL=sse2 or go, read at start,
// forces a slower path (to test the fallbacks on an AVX2 machine).
//
// One machine always takes the same path and the same summation order,
// with no threads: results are the same bit for bit on every run. They
// differ from gonum's in rounding only (another summation order, and fused
// multiply-adds on the AVX2 path); the tests hold every path to gonum's
// products within 1e-13 relative to Σ_p |a_ip|·|b_pj|.
package dense
