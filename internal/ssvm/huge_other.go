//go:build !linux

package ssvm

// largeFloats returns a zeroed slice of n float64s.
func largeFloats(n int) []float64 { return make([]float64, n) }

// hugeAligned reports whether largeFloats aligns large slices to huge pages.
const hugeAligned = false
