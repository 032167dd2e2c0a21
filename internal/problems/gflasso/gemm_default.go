//go:build !openblas

package gflasso

import "github.com/fwlab/fwlab/internal/dense"

// spgGemm is the dense product of SPG's iterations: internal/dense's
// blocked kernel (AVX2/FMA assembly where the CPU has it) in the default
// build; with -tags openblas, gonum's BLAS, which that build does with
// OpenBLAS.
var spgGemm = dense.Gemm
