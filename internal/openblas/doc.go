// Package openblas, imported for its side effect in a build with
// -tags openblas, makes gonum do its BLAS calls — every dense matrix
// product of every method and problem — with OpenBLAS through gonum's
// netlib binding (cgo; on Debian the libopenblas-dev package). Without the
// tag the package is empty and gonum keeps its pure-Go BLAS, so the default
// build needs neither cgo nor the library.
package openblas
