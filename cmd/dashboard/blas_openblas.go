//go:build openblas

package main

// Built with -tags openblas (make build-openblas), the dashboard does gonum's
// BLAS calls with OpenBLAS; see internal/openblas.
import _ "github.com/fwlab/fwlab/internal/openblas"
