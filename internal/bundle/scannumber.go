package bundle

import (
	"math"
	"math/big"
	"math/bits"
	"sync"
)

// smallInt reads a JSON integer of up to 18 digits (one parseInt reads
// the same), or reports false.
func smallInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	neg := v[0] == '-'
	if neg {
		v = v[1:]
		if len(v) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = 10*n + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, int64(int(n)) == n
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads a record's number (parseFloat's rules): most directly (see
// fastFloat), the others with parseFloat.
func number(v []byte) (float64, error) {
	if x, ok := fastFloat(v); ok {
		return x, nil
	}
	return parseFloat("", v)
}

// fastFloat reads a JSON number of at most 19 significant digits, as
// strconv.ParseFloat does, bit for bit, or reports false (more digits, a
// result that is subnormal or out of range, a rare case too close to call,
// not a number): those go to strconv.ParseFloat. Its digits make an
// integer m and its power of ten an e, the number m·10^e. When m is at
// most 2⁵³ and e at most 22 either way, both are float64s exactly, so
// m·10^e (or m/10^−e), one correctly rounded operation, is the float64
// nearest to the number (Clinger's fast path). The other numbers, among
// them the 17 digits the encoder writes for most floats, are read by the
// Eisel-Lemire algorithm (eiselLemire), the one strconv.ParseFloat takes for
// them after reading the text as it does.
func fastFloat(v []byte) (float64, bool) {
	i, neg := 0, false
	if i < len(v) && v[i] == '-' {
		neg = true
		i++
	}
	var m uint64
	nd, exp := 0, 0
	start := i
	for ; i < len(v) && isDigit(v[i]); i++ {
		if m == 0 && v[i] == '0' {
			continue
		}
		if nd == 19 { // 20 digits may be more than 2⁶⁴
			return 0, false
		}
		m, nd = 10*m+uint64(v[i]-'0'), nd+1
	}
	if i == start {
		return 0, false
	}
	if i < len(v) && v[i] == '.' {
		start = i + 1
		for i++; i < len(v) && isDigit(v[i]); i++ {
			if m == 0 && v[i] == '0' {
				exp--
				continue
			}
			if nd == 19 {
				return 0, false
			}
			m, nd, exp = 10*m+uint64(v[i]-'0'), nd+1, exp-1
		}
		if i == start {
			return 0, false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		sign := 1
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			if v[i] == '-' {
				sign = -1
			}
			i++
		}
		e := 0
		start = i
		for ; i < len(v) && isDigit(v[i]); i++ {
			if e > 1000 {
				return 0, false
			}
			e = 10*e + int(v[i]-'0')
		}
		if i == start {
			return 0, false
		}
		exp += sign * e
	}
	if i != len(v) {
		return 0, false
	}
	if m == 0 {
		if neg {
			return math.Copysign(0, -1), true
		}
		return 0, true
	}
	if m <= 1<<53 && -22 <= exp && exp <= 22 {
		x := float64(m)
		if exp > 0 {
			x *= pow10[exp]
		} else if exp < 0 {
			x /= pow10[-exp]
		}
		if neg {
			x = -x
		}
		return x, true
	}
	return eiselLemire(m, exp, neg)
}

// eiselLemire is the float64 nearest to man·10^exp10 (man > 0), negated
// when neg, or false when the algorithm cannot tell it (a result near a
// halfway point, subnormal or out of range): Go's strconv.eiselLemire64,
// line for line (https://nigeltao.github.io/blog/2020/eisel-lemire.html).
func eiselLemire(man uint64, exp10 int, neg bool) (float64, bool) {
	const mantBits, bias = 52, -1023
	if exp10 < pow10Min || exp10 > pow10Max {
		return 0, false
	}
	pow := pow10Table()[exp10-pow10Min]
	exp2 := pow10Exp2(exp10)

	// Normalization.
	clz := bits.LeadingZeros64(man)
	man <<= uint(clz)
	retExp2 := uint64(exp2+63-bias) - uint64(clz)

	// Multiplication.
	xHi, xLo := bits.Mul64(man, pow.hi)

	// Wider Approximation.
	if xHi&0x1FF == 0x1FF && xLo+man < man {
		yHi, yLo := bits.Mul64(man, pow.lo)
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1FF == 0x1FF && mergedLo+1 == 0 && yLo+man < man {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}

	// Shifting to 54 Bits.
	msb := xHi >> 63
	retMantissa := xHi >> (msb + 9)
	retExp2 -= 1 ^ msb

	// Half-way Ambiguity.
	if xLo == 0 && xHi&0x1FF == 0 && retMantissa&3 == 1 {
		return 0, false
	}

	// From 54 to 53 Bits.
	retMantissa += retMantissa & 1
	retMantissa >>= 1
	if retMantissa>>53 > 0 {
		retMantissa >>= 1
		retExp2++
	}
	// subnormal (retExp2 zero or below, wrapped) or Inf/NaN space
	if retExp2-1 >= 0x7FF-1 {
		return 0, false
	}
	retBits := retExp2<<mantBits | retMantissa&(1<<mantBits-1)
	if neg {
		retBits |= 1 << 63
	}
	return math.Float64frombits(retBits), true
}

// The powers of ten eiselLemire multiplies by: 10^e for e in
// [pow10Min, pow10Max] as a 128-bit mantissa, its top bit set, rounded
// down, and a power of two (10^e = mantissa/2¹²⁸ · 2^pow10Exp2(e)).
const (
	pow10Min = -348
	pow10Max = 347
)

type uint128 struct{ hi, lo uint64 }

// pow10Table computes the mantissas once, when first needed (exactly, with
// math/big, as Go's strconv generates its own table).
var pow10Table = sync.OnceValue(func() []uint128 {
	t := make([]uint128, 0, pow10Max-pow10Min+1)
	ten := big.NewInt(10)
	for e := pow10Min; e <= pow10Max; e++ {
		p := new(big.Int).Exp(ten, big.NewInt(int64(abs(e))), nil)
		var q *big.Int
		if e >= 0 {
			// the top 128 bits of 10^e (all of them up to 10^38)
			if sh := p.BitLen() - 128; sh > 0 {
				q = p.Rsh(p, uint(sh))
			} else {
				q = p.Lsh(p, uint(-sh))
			}
		} else {
			// 2^(127+bits(10^−e)) / 10^−e, rounded down: between 2¹²⁷ and 2¹²⁸
			num := new(big.Int).Lsh(big.NewInt(1), uint(127+p.BitLen()))
			q = num.Quo(num, p)
		}
		lo := new(big.Int).And(q, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
		t = append(t, uint128{hi: new(big.Int).Rsh(q, 64).Uint64(), lo: lo})
	}
	return t
})

// pow10Exp2 is the power of two of 10^e's entry: 1 + ⌊e·log₂10⌋ (exact
// for |e| ≤ 500 with this integer approximation of log₂10, as strconv's).
func pow10Exp2(e int) int { return 1 + (e*108853)>>15 }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
