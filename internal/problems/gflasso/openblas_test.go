//go:build openblas

package gflasso

// With -tags openblas the tests and benchmarks of this package do gonum's
// BLAS calls with OpenBLAS, as the dashboard built with that tag does:
// go test -tags openblas -run '^$' -bench SPGIteration ./internal/problems/gflasso
import _ "github.com/fwlab/fwlab/internal/openblas"

// openblasBuild: the golden files pin the pure-Go build's bits; this build
// is held to them to rounding (golden).
const openblasBuild = true
