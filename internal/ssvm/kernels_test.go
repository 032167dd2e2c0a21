package ssvm

import (
	"math"
	"math/bits"
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

// TestEmitLetter26 checks one letter's vector emission scores against the
// scalar lane sums, bit for bit, for lanes of 0 to 9 features (repeats
// allowed) and tails of 0 to 2 over a 129-feature table with values of
// many magnitudes.
func TestEmitLetter26(t *testing.T) {
	forKernels(t, testEmitLetter26)
}

// forKernels runs test with the 256-bit kernels (where the CPU has them)
// and with the SSE2 ones.
func forKernels(t *testing.T, test func(t *testing.T)) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, avx := range []bool{true, false} {
		if avx && !saved {
			continue
		}
		useAVX2 = avx
		t.Run(map[bool]string{true: "avx2", false: "sse2"}[avx], test)
	}
}

func testEmitLetter26(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const F = 129
	wt := make([]float64, 26*F)
	for j := range wt {
		wt[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
	}
	acc := make([]float64, 78)
	for rep := 0; rep < 500; rep++ {
		pre := rng.IntN(3) // features of other letters before this one
		idx := make([]uint16, pre)
		o := make([]int32, 6)
		for r := 0; r < 5; r++ {
			o[r] = int32(len(idx))
			n := rng.IntN(10)
			if r == 4 {
				n = rng.IntN(3)
			}
			for q := 0; q < n; q++ {
				idx = append(idx, uint16(rng.IntN(F)))
			}
		}
		o[5] = int32(len(idx))
		var lanes [4][26]float64
		for r := 0; r < 5; r++ {
			for _, f := range idx[o[r]:o[r+1]] {
				for k := range 26 {
					lanes[r%4][k] += wt[int(f)*26+k]
				}
			}
		}
		got := make([]float64, 26)
		emitLetter26(got, wt, idx, o, acc)
		for k := range got {
			want := (lanes[1][k] + lanes[3][k]) + (lanes[0][k] + lanes[2][k])
			if math.Float64bits(got[k]) != math.Float64bits(want) {
				t.Fatalf("rep %d, label %d: got %v, want %v", rep, k, got[k], want)
			}
		}
	}
}

// TestRelax checks relaxAbove and relaxBelow against their scalar loops for
// every length up to 30 (the pairs and an odd tail), with many ties
// (values from a small set) and signed zeros.
func TestRelax(t *testing.T) { forKernels(t, testRelax) }

func testRelax(t *testing.T) {
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

// TestScatterRows26 checks the row updates wt[26f+k] += r[k] against the
// scalar loop bit for bit, for index lists of 0 to 40 features (repeats
// allowed), values of many magnitudes and signed zeros in r.
func TestScatterRows26(t *testing.T) { forKernels(t, testScatterRows26) }

func testScatterRows26(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	const F = 129
	for rep := 0; rep < 300; rep++ {
		wt := make([]float64, 26*F)
		for j := range wt {
			wt[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
		}
		var r [26]float64
		for k := range r {
			switch rng.IntN(4) {
			case 0:
				r[k] = math.Copysign(0, -1)
			case 1:
				r[k] = 0
			default:
				r[k] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
			}
		}
		idx := make([]uint16, rng.IntN(41))
		for q := range idx {
			idx[q] = uint16(rng.IntN(F))
		}
		want := slices.Clone(wt)
		for _, f := range idx {
			for k := range 26 {
				want[int(f)*26+k] += r[k]
			}
		}
		scatterRows26(wt, idx, &r)
		for j := range wt {
			if math.Float64bits(wt[j]) != math.Float64bits(want[j]) {
				t.Fatalf("rep %d, entry %d: got %v, want %v", rep, j, wt[j], want[j])
			}
		}
	}
}

// TestPruneCandidates checks the vector pruneCandidates against
// pruneCandidatesGo for every length up to 30 (pairs and an odd tail),
// with many ties (values from a small set, signed zeros), continuous
// values and non-finite entries.
func TestPruneCandidates(t *testing.T) { forKernels(t, testPruneCandidates) }

func testPruneCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 8))
	small := []float64{-1, -0.5, math.Copysign(0, -1), 0, 0.5, 1}
	gens := []func() float64{
		func() float64 { return small[rng.IntN(len(small))] },
		func() float64 { return rng.NormFloat64() * 3 },
		func() float64 {
			switch rng.IntN(30) {
			case 0:
				return math.NaN()
			case 1:
				return math.Inf(1 - 2*rng.IntN(2))
			}
			return rng.NormFloat64()
		},
	}
	for K := 1; K <= 30; K++ {
		reps := 300
		if K == 26 {
			reps = 5000
		}
		for rep := 0; rep < reps; rep++ {
			gen := gens[rep%len(gens)]
			prev, ub, lb := make([]float64, K), make([]float64, K), make([]float64, K)
			for j := range prev {
				prev[j] = gen()
				a, b := small[rng.IntN(len(small))], rng.NormFloat64()
				if rep%2 == 0 {
					a, b = b, a
				}
				ub[j], lb[j] = max(a, b), min(a, b)
			}
			c1, c2 := make([]int, K), make([]int, K)
			js1, n1 := pruneCandidates(prev, ub, lb, c1)
			js2, n2 := pruneCandidatesGo(prev, ub, lb, c2)
			if js1 != js2 || n1 != n2 || !slices.Equal(c1[:n1], c2[:n2]) {
				t.Fatalf("K = %d, prev %v: (j*, candidates) = (%d, %v), want (%d, %v)", K, prev, js1, c1[:n1], js2, c2[:n2])
			}
			if K != 26 {
				continue
			}
			js3, mask, ok := prune26((*[26]float64)(prev), (*[26]float64)(ub), (*[26]float64)(lb))
			if !useAVX2 {
				if ok {
					t.Fatal("prune26 ran without its vector kernel")
				}
				continue
			}
			if ok != (n2 > 0) {
				t.Fatalf("prev %v: prune26 ok = %v, pruneCandidatesGo found %d candidates", prev, ok, n2)
			}
			var c3 []int
			for m := mask; m != 0; m &= m - 1 {
				c3 = append(c3, bits.TrailingZeros32(m))
			}
			if ok && (js3 != js2 || !slices.Equal(c3, c2[:n2])) {
				t.Fatalf("prev %v: prune26 (j*, candidates) = (%d, %v), want (%d, %v)", prev, js3, c3, js2, c2[:n2])
			}
		}
	}
}

// TestFillAndAddRow checks fillRow and addRow against their scalar loops bit
// for bit for every length up to 30, with signed zeros among the values.
func TestFillAndAddRow(t *testing.T) { forKernels(t, testFillAndAddRow) }

func testFillAndAddRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 19))
	vals := []float64{-1.5, math.Copysign(0, -1), 0, 0.25, 1}
	pick := func() float64 {
		if rng.IntN(2) == 0 {
			return vals[rng.IntN(len(vals))]
		}
		return rng.NormFloat64()
	}
	for n := 1; n <= 30; n++ {
		for rep := 0; rep < 50; rep++ {
			cur, row := make([]float64, n), make([]float64, n)
			bk := make([]int, n)
			for k := range cur {
				cur[k], row[k] = pick(), pick()
			}
			pj, j := pick(), rng.IntN(100)
			fillRow(cur, bk, row, pj, j)
			for k := range cur {
				if want := pj + row[k]; math.Float64bits(cur[k]) != math.Float64bits(want) || bk[k] != j {
					t.Fatalf("fillRow n = %d, label %d: (%v, %d), want (%v, %d)", n, k, cur[k], bk[k], want, j)
				}
			}
			a := pick()
			for _, skip := range []int{-1, rng.IntN(n)} {
				got := slices.Clone(cur)
				want := slices.Clone(cur)
				aa := a
				if skip < 0 {
					aa = 0
				}
				addRow(got, row, aa, skip)
				for k := range want {
					switch {
					case skip < 0:
						want[k] += row[k]
					case k == skip:
						want[k] += row[k]
					default:
						want[k] += row[k] + aa
					}
				}
				for k := range want {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("addRow n = %d, skip %d, label %d: %v, want %v", n, skip, k, got[k], want[k])
					}
				}
			}
		}
	}
}

// TestResidual26 checks r = e(y) − μ and its nonzero mask against the
// scalar loop (r = −μ, then +1 at y): the same values bit for bit except
// that a zero may be +0 instead of −0, on rows with many exact zeros, ones
// and values of many magnitudes.
func TestResidual26(t *testing.T) {
	var r [26]float64
	if _, ok := residual26(&r, &eye26[0], &r); !ok {
		t.Skip("no vector kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(12, 3))
	for rep := 0; rep < 2000; rep++ {
		var mu [26]float64
		for k := range mu {
			switch rng.IntN(4) {
			case 0:
				mu[k] = 0
			case 1:
				mu[k] = 1
			default:
				mu[k] = rng.Float64() * math.Pow(10, float64(-rng.IntN(17)))
			}
		}
		y := rng.IntN(26)
		mask, _ := residual26(&r, &eye26[y], &mu)
		for k := range mu {
			want := -mu[k]
			if k == y {
				want++
			}
			if r[k] != want || (want != 0 && math.Float64bits(r[k]) != math.Float64bits(want)) {
				t.Fatalf("rep %d, label %d (y = %d): r = %v, want %v", rep, k, y, r[k], want)
			}
			if bit := mask>>uint(k)&1 == 1; bit != (want != 0) {
				t.Fatalf("rep %d, label %d: mask bit %v for r = %v", rep, k, bit, want)
			}
		}
	}
}

// TestRelaxAll26 checks the one-call position of Viterbi for 26 labels
// against fillRow, relaxAbove and relaxBelow called in turn, bit for bit,
// with many ties (values from a small set, signed zeros) and random masks.
func TestRelaxAll26(t *testing.T) {
	if !useAVX2 {
		t.Skip("no vector kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(31, 4))
	vals := []float64{-1, -0.5, math.Copysign(0, -1), 0, 0.5, 1}
	pick := func() float64 {
		if rng.IntN(3) == 0 {
			return rng.NormFloat64()
		}
		return vals[rng.IntN(len(vals))]
	}
	for rep := 0; rep < 3000; rep++ {
		var prev [26]float64
		var tT [676]float64
		for k := range prev {
			prev[k] = pick()
		}
		for k := range tT {
			tT[k] = pick()
		}
		js := rng.IntN(26)
		mask := uint32(rng.Int64()) & (1<<26 - 1)
		above, below := mask&^(uint32(2)<<js-1), mask&(uint32(1)<<js-1)
		var gc, wc [26]float64
		var gb, wb [26]int
		relaxAll26(&prev, &gc, &gb, &tT, js, above, below)
		fillRow(wc[:], wb[:], tT[js*26:js*26+26], prev[js], js)
		for j := 0; j < 26; j++ {
			if above>>uint(j)&1 == 1 {
				relaxAbove(wc[:], wb[:], tT[j*26:j*26+26], prev[j], j)
			}
		}
		for j := 25; j >= 0; j-- {
			if below>>uint(j)&1 == 1 {
				relaxBelow(wc[:], wb[:], tT[j*26:j*26+26], prev[j], j)
			}
		}
		for k := range wc {
			if math.Float64bits(gc[k]) != math.Float64bits(wc[k]) || gb[k] != wb[k] {
				t.Fatalf("rep %d (j* = %d, above %b, below %b), label %d: (%v, %d), want (%v, %d)", rep, js, above, below, k, gc[k], gb[k], wc[k], wb[k])
			}
		}
	}
}

// TestViterbiPos26 checks the one-call middle position against prune26,
// relaxAll26 and addRow called in turn, bit for bit, with and without the
// loss term, with many ties, and that it declines (writing nothing) when a
// score is not finite.
func TestViterbiPos26(t *testing.T) {
	if !useAVX2 {
		t.Skip("no vector kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(8, 27))
	vals := []float64{-1, -0.5, math.Copysign(0, -1), 0, 0.5, 1}
	pick := func() float64 {
		if rng.IntN(3) == 0 {
			return rng.NormFloat64() * 4
		}
		return vals[rng.IntN(len(vals))]
	}
	ran := 0
	for rep := 0; rep < 4000; rep++ {
		var prev, ub, lb, e [26]float64
		var tT [676]float64
		for k := range prev {
			prev[k], e[k] = pick(), pick()
		}
		for k := range tT {
			tT[k] = pick()
		}
		for j := 0; j < 26; j++ {
			ub[j], lb[j] = slices.Max(tT[j*26:j*26+26]), slices.Min(tT[j*26:j*26+26])
		}
		if rep%50 == 0 {
			prev[rng.IntN(26)] = math.Inf(1 - 2*rng.IntN(2))
		}
		skip, a := -1, 0.0
		if rep%2 == 0 {
			skip, a = rng.IntN(26), 1/float64(1+rng.IntN(8))
		}
		var gc, wc [26]float64
		var gb, wb [26]int
		for k := range gc {
			gc[k], wc[k], gb[k], wb[k] = 7, 7, -1, -1
		}
		ok := viterbiPos26(&prev, &gc, &gb, &tT, &ub, &lb, &e, a, skip)
		js, mask, want := prune26(&prev, &ub, &lb)
		if ok != want {
			t.Fatalf("rep %d: ok = %v, prune26 says %v", rep, ok, want)
		}
		if !ok {
			if gc[0] != 7 || gb[0] != -1 {
				t.Fatalf("rep %d: declined but wrote", rep)
			}
			continue
		}
		ran++
		relaxAll26(&prev, &wc, &wb, &tT, js, mask&^(uint32(2)<<js-1), mask&(uint32(1)<<js-1))
		addRow(wc[:], e[:], a, skip)
		for k := range wc {
			if math.Float64bits(gc[k]) != math.Float64bits(wc[k]) || gb[k] != wb[k] {
				t.Fatalf("rep %d (skip %d), label %d: (%v, %d), want (%v, %d)", rep, skip, k, gc[k], gb[k], wc[k], wb[k])
			}
		}
	}
	if ran < 3000 {
		t.Fatalf("only %d positions ran the kernel", ran)
	}
}

// TestAddColumn checks w_k += a·x_j on feature-major weights (the column
// kernel for binary letters) against the scalar loop bit for bit, for
// letters of 0 to 40 features.
func TestAddColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 6))
	for rep := 0; rep < 500; rep++ {
		K, F := 1+rng.IntN(30), 1+rng.IntN(140)
		X := make([]float64, F)
		for f := range X {
			if rng.IntN(4) == 0 {
				X[f] = 1
			}
		}
		ds := &Dataset{Name: "one", Labels: K, Feat: F, X: X, Y: []int{0}, Words: []Word{{0, 1}}}
		sx, err := newSparseRows(ds)
		if err != nil {
			t.Fatal(err)
		}
		wt := make([]float64, K*F)
		for q := range wt {
			wt[q] = rng.NormFloat64()
		}
		want := slices.Clone(wt)
		k, a := rng.IntN(K), rng.NormFloat64()*math.Pow(10, float64(rng.IntN(10)-5))
		for f, v := range X {
			if v != 0 {
				want[f*K+k] += a
			}
		}
		sx.addColumn(0, a, k, K, wt)
		for q := range wt {
			if math.Float64bits(wt[q]) != math.Float64bits(want[q]) {
				t.Fatalf("rep %d (K = %d, F = %d, k = %d), weight %d: %v, want %v", rep, K, F, k, q, wt[q], want[q])
			}
		}
	}
}
