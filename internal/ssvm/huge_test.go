package ssvm

import (
	"testing"
	"unsafe"
)

// TestLargeFloats checks that largeFloats returns n zeros, with room for
// exactly n, and (on Linux, for large n) starting on a huge-page boundary.
func TestLargeFloats(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 5 << 20} {
		x := largeFloats(n)
		if len(x) != n || cap(x) != n {
			t.Fatalf("n = %d: len %d, cap %d", n, len(x), cap(x))
		}
		for i, v := range x {
			if v != 0 {
				t.Fatalf("n = %d: x[%d] = %v", n, i, v)
			}
		}
		if n == 5<<20 && hugeAligned {
			if a := uintptr(unsafe.Pointer(unsafe.SliceData(x))); a%(2<<20) != 0 {
				t.Fatalf("n = %d: starts at %#x, not on a 2 MiB boundary", n, a)
			}
		}
	}
}
