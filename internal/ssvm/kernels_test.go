package ssvm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestAverageInto checks the one-sweep average against the two vector
// operations it replaces, bit for bit, for every length up to 40 (the
// unrolled body and the tail) and for OCR's d, with values spread over many
// magnitudes, signed zeros and non-finite entries.
func TestAverageInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	val := func() float64 {
		switch rng.IntN(20) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Inf(1 - 2*rng.IntN(2))
		case 3:
			return 1e-310 * rng.NormFloat64() // subnormal
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
	}
	lengths := []int{4082}
	for n := 0; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for rep := 0; rep < 20; rep++ {
			dst, w := make([]float64, n), make([]float64, n+rng.IntN(3))
			for j := range dst {
				dst[j] = val()
			}
			for j := range w {
				w[j] = val()
			}
			k := 1 + rng.IntN(1_000_000)
			rho := 2 / float64(k+1)
			want := append([]float64(nil), dst...)
			floats.Scale(1-rho, want)
			floats.AddScaled(want, rho, w[:n])
			averageInto(dst, w, 1-rho, rho)
			for j := range dst {
				if math.Float64bits(dst[j]) != math.Float64bits(want[j]) && !(math.IsNaN(dst[j]) && math.IsNaN(want[j])) {
					t.Fatalf("n = %d, entry %d: got %v (%#x), want %v (%#x)", n, j, dst[j], math.Float64bits(dst[j]), want[j], math.Float64bits(want[j]))
				}
			}
		}
	}
}

// TestAddRows26 checks the vector row sums against the scalar loop, bit for
// bit, for lists of 0 to 40 features (repeats allowed) over a 129-feature
// table with values of many magnitudes.
func TestAddRows26(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const F = 129
	wt := make([]float64, 26*F)
	for j := range wt {
		wt[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
	}
	for n := 0; n <= 40; n++ {
		idx := make([]uint16, n)
		for q := range idx {
			idx[q] = uint16(rng.IntN(F))
		}
		got, want := make([]float64, 26), make([]float64, 26)
		for k := range got {
			got[k] = rng.NormFloat64()
			want[k] = got[k]
		}
		addRows26(got, wt, idx)
		for _, f := range idx {
			for k := range want {
				want[k] += wt[int(f)*26+k]
			}
		}
		for k := range got {
			if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
				t.Fatalf("%d features, label %d: got %v, want %v", n, k, got[k], want[k])
			}
		}
	}
}

// TestRelax checks relaxAbove and relaxBelow against their scalar loops for
// every length up to 30 (the pairs and an odd tail), with many ties
// (values from a small set) and signed zeros.
func TestRelax(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 13))
	vals := []float64{-1.5, -0.25, math.Copysign(0, -1), 0, 0.25, 0.5, 1}
	pick := func() float64 { return vals[rng.IntN(len(vals))] }
	for n := 0; n <= 30; n++ {
		for rep := 0; rep < 50; rep++ {
			cur, row := make([]float64, n), make([]float64, n)
			bk := make([]int, n)
			for k := range cur {
				cur[k], row[k], bk[k] = pick(), pick(), rng.IntN(100)
			}
			pj, j := pick(), 100+rng.IntN(100)
			for _, below := range []bool{false, true} {
				gc, gb := append([]float64(nil), cur...), append([]int(nil), bk...)
				wc, wb := append([]float64(nil), cur...), append([]int(nil), bk...)
				if below {
					relaxBelow(gc, gb, row, pj, j)
				} else {
					relaxAbove(gc, gb, row, pj, j)
				}
				for k := range wc {
					if s := pj + row[k]; s > wc[k] || (below && s >= wc[k]) {
						wc[k], wb[k] = s, j
					}
				}
				for k := range wc {
					if math.Float64bits(gc[k]) != math.Float64bits(wc[k]) || gb[k] != wb[k] {
						t.Fatalf("n = %d, below = %v, label %d: got (%v, %d), want (%v, %d)", n, below, k, gc[k], gb[k], wc[k], wb[k])
					}
				}
			}
		}
	}
}

// TestLabelSets checks the per-position label sets of bcfw-as (a bit mask
// for up to 64 labels, insertion into sorted lists beyond) against sorting
// and deduplicating directly.
func TestLabelSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for _, K := range []int{2, 26, 64, 65, 100} {
		for rep := 0; rep < 200; rep++ {
			L := 1 + rng.IntN(12)
			s := make([]int, L)
			for q := range s {
				s[q] = rng.IntN(K)
			}
			as := make([]atom, rng.IntN(6))
			for a := range as {
				as[a].y = make([]int, L)
				for q := range as[a].y {
					as[a].y[q] = rng.IntN(K)
					if rng.IntN(3) == 0 {
						as[a].y[q] = s[q]
					}
				}
			}
			nz, off := labelSets(K, s, as, nil, nil)
			if len(off) != L+1 {
				t.Fatalf("K = %d: %d offsets for %d positions", K, len(off), L)
			}
			for q := 0; q < L; q++ {
				want := []int32{int32(s[q])}
				for _, at := range as {
					want = append(want, int32(at.y[q]))
				}
				slices.Sort(want)
				want = slices.Compact(want)
				if got := nz[off[q]:off[q+1]]; !slices.Equal(got, want) {
					t.Fatalf("K = %d, position %d: got %v, want %v", K, q, got, want)
				}
			}
		}
	}
}
