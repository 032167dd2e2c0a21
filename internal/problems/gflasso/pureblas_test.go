//go:build !openblas

package gflasso

// openblasBuild: the golden files pin this (pure-Go) build's bits exactly.
const openblasBuild = false
