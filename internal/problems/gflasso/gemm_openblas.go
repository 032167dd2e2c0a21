//go:build openblas

package gflasso

import "gonum.org/v1/gonum/blas/blas64"

// spgGemm is the dense product of SPG's iterations: gonum's BLAS, which
// this build does with OpenBLAS.
var spgGemm = blas64.Gemm
