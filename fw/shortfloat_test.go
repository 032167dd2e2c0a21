package fw

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// check compares the three formats of f with strconv's.
func check(t *testing.T, f float64) {
	t.Helper()
	for _, c := range []struct{ fmt byte }{{'f'}, {'e'}, {'g'}, {'x'}} {
		want := strconv.AppendFloat(nil, f, c.fmt, -1, 64)
		if got := AppendFloat([]byte("x"), f, c.fmt); string(got[1:]) != string(want) {
			t.Fatalf("%c of %v (bits %#016x): %q, strconv %q", c.fmt, f, math.Float64bits(f), got[1:], want)
		}
	}
}

// Every format of random bit patterns (every exponent alike), random
// values in the ranges records hold, and the families where shortest
// conversions go wrong: powers of two and ten, their neighbours, integers,
// k/n fractions, numbers of few digits, the largest and smallest normals,
// subnormals, zeros, infinities and NaN.
func TestFormatsAreStrconvs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	for range n {
		check(t, math.Float64frombits(rng.Uint64()))
		check(t, rng.Float64())
		check(t, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
	}
	for e := -1074; e <= 1023; e++ {
		p := math.Ldexp(1, e)
		check(t, p)
		check(t, math.Nextafter(p, 0))
		check(t, math.Nextafter(p, math.Inf(1)))
		check(t, -p)
	}
	for e := -330; e <= 310; e++ {
		p, _ := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
		check(t, p)
		check(t, math.Nextafter(p, 0))
		check(t, math.Nextafter(p, math.Inf(1)))
		for _, m := range []string{"2", "5", "12", "123456789", "9999999999999999", "17976931348623157"} {
			v, _ := strconv.ParseFloat(m+"e"+strconv.Itoa(e), 64)
			check(t, v)
		}
	}
	for i := range 100_000 {
		check(t, float64(i))
		check(t, float64(i)/6251)
		check(t, float64(i)*1e-9)
		check(t, float64(rng.Uint64()>>11))
		check(t, float64(rng.Uint64()>>uint(rng.IntN(64))))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		0x1p-1022, math.Inf(1), math.Inf(-1), math.NaN(), 1e21, 1e-7, 999999, 1e6, 123456.5, 0.0001, 0.00001} {
		check(t, f)
	}
}

// The powers of ten are what ./internal/pow10gen makes of their definition (checked
// here with math/big, apart from the generator): 2^127 ≤ g < 2^128 and g the
// ceiling of 10^k scaled.
func TestPow10TableIsItsDefinition(t *testing.T) {
	for k := minPow10; k <= maxPow10; k++ {
		g := new(big.Int).Lsh(new(big.Int).SetUint64(pow10[k-minPow10][0]), 64)
		g.Or(g, new(big.Int).SetUint64(pow10[k-minPow10][1]))
		if g.BitLen() != 128 {
			t.Fatalf("1e%d: %d bits", k, g.BitLen())
		}
		// g-1 < 10^k·2^s ≤ g, with s = 127-⌊log2 10^k⌋
		s := 127 - floorLog2Pow10(k)
		x := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(k, -k))), nil))
		if k < 0 {
			x.Inv(x)
		}
		two := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(max(s, -s))))
		if s < 0 {
			two.Inv(two)
		}
		x.Mul(x, two)
		hi := new(big.Rat).SetInt(g)
		lo := new(big.Rat).SetInt(new(big.Int).Sub(g, big.NewInt(1)))
		if x.Cmp(hi) > 0 || x.Cmp(lo) <= 0 {
			t.Fatalf("1e%d: %v is not the ceiling of %v", k, g, x.FloatString(3))
		}
	}
}

// The integer logarithms are the exact ones over the exponents used.
func TestFloorLogs(t *testing.T) {
	for e := -1100; e <= 1100; e++ {
		p := new(big.Float).SetMantExp(big.NewFloat(1), e) // 2^e
		if got, want := floorLog10Pow2(e), floorLog10(new(big.Rat).SetFloat64(0).SetFrac(ratOf(p))); got != want {
			t.Fatalf("⌊log10 2^%d⌋ = %d, want %d", e, got, want)
		}
		tq := new(big.Rat).Mul(new(big.Rat).SetFrac(ratOf(p)), big.NewRat(3, 4))
		if got, want := floorLog10ThreeQuartersPow2(e), floorLog10(tq); got != want {
			t.Fatalf("⌊log10(3/4·2^%d)⌋ = %d, want %d", e, got, want)
		}
	}
	for e := -400; e <= 400; e++ {
		x := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(e, -e))), nil))
		if e < 0 {
			x.Inv(x)
		}
		if got, want := floorLog2Pow10(e), floorLog2(x); got != want {
			t.Fatalf("⌊log2 10^%d⌋ = %d, want %d", e, got, want)
		}
	}
}

func ratOf(f *big.Float) (*big.Int, *big.Int) {
	r, _ := f.Rat(nil)
	return r.Num(), r.Denom()
}

// floorLog10 is ⌊log10 x⌋ for x > 0, exactly: a float estimate, then
// moved until 10^k ≤ x < 10^(k+1).
func floorLog10(x *big.Rat) int {
	f, _ := new(big.Float).SetRat(x).Float64()
	e2 := new(big.Float).SetRat(x).MantExp(nil)
	k := int(math.Floor(float64(e2) * math.Log10(2)))
	if f != 0 && !math.IsInf(f, 0) {
		k = int(math.Floor(math.Log10(f)))
	}
	for pow10Rat(k).Cmp(x) > 0 {
		k--
	}
	for pow10Rat(k+1).Cmp(x) <= 0 {
		k++
	}
	return k
}

func pow10Rat(k int) *big.Rat {
	r := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(k, -k))), nil))
	if k < 0 {
		r.Inv(r)
	}
	return r
}

func floorLog2(x *big.Rat) int {
	k := x.Num().BitLen() - x.Denom().BitLen()
	// adjust so that 2^k ≤ x < 2^(k+1)
	for {
		p := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(max(k, -k))))
		if k < 0 {
			p.Inv(p)
		}
		if p.Cmp(x) > 0 {
			k--
			continue
		}
		q := new(big.Rat).Mul(p, big.NewRat(2, 1))
		if q.Cmp(x) <= 0 {
			k++
			continue
		}
		return k
	}
}

func FuzzFormatsAreStrconvs(f *testing.F) {
	for _, v := range []float64{0, 1, 0.1, 1e21, 1e-7, 5e-324, math.MaxFloat64, 0.020126645} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, u uint64) { check(t, math.Float64frombits(u)) })
}

func BenchmarkAppendFloat(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, 1024)
	for i := range vals {
		vals[i] = float64(i+5000)/6251 + rng.Float64()*1e-9
	}
	var buf []byte
	b.Run("fw", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = AppendFloat(buf[:0], vals[i&1023], 'f')
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = strconv.AppendFloat(buf[:0], vals[i&1023], 'f', -1, 64)
		}
	})
}

func ExampleAppendFloat() {
	var b []byte
	for _, f := range []float64{0.1, 1.0 / 3, 1e21, 1234567, 5e-7} {
		b = AppendFloat(b, f, 'g')
		b = append(b, ' ')
	}
	fmt.Println(string(b))
	// Output: 0.1 0.3333333333333333 1e+21 1.234567e+06 5e-07
}
