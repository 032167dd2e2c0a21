package ssvm

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on amd64 and arm64 Linux.
const hugePage = 2 << 20

// hugeAligned reports whether largeFloats aligns large slices to huge pages.
const hugeAligned = true

// largeFloats returns a zeroed slice of n float64s. From a few huge pages
// on, it starts on a huge-page boundary and asks the kernel to back it
// with transparent huge pages (madvise MADV_HUGEPAGE, honoured when THP is
// "madvise" or "always"): the block steps read it at random places, and
// with 4 KiB pages nearly every block's rows would also miss the TLB. Only
// a hint: the values and the results are the same either way.
func largeFloats(n int) []float64 {
	if n*8 < 4*hugePage {
		return make([]float64, n)
	}
	raw := make([]float64, n+hugePage/8)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	skip := int((hugePage - addr%hugePage) % hugePage / 8)
	out := raw[skip : skip+n : skip+n]
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), n*8/hugePage*hugePage)
	_ = syscall.Madvise(b, 14) // MADV_HUGEPAGE; an error (an old kernel) leaves ordinary pages
	return out
}
