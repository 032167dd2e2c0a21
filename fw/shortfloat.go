package fw

// AppendFloat (below) writes a float64 as the shortest decimal text that
// reads back as the same float64, byte for byte what strconv.AppendFloat
// writes with precision -1, in the formats records use ('e', 'f', 'g'), at
// about twice its speed: every record written as text carries three or more
// such numbers.
//
// The decimal digits come from the Schubfach algorithm (R. Giulietti, "The
// Schubfach way to render doubles", 2020): the float's rounding interval is
// scaled by a power of ten held to 128 bits (pow10.go, made by ./gen), and
// the shortest decimal in it, nearest the float (ties to even), is read off
// its bounds. Zero, subnormal, infinite and NaN values go to strconv.

//go:generate go run ./internal/pow10gen

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

const (
	minPow10 = -292
	maxPow10 = 326
)

// AppendFloat appends f as strconv.AppendFloat(b, f, format, -1, 64) does
// (the shortest text that reads back as f), faster for the formats 'e', 'f'
// and 'g'. For 'g', the exponent form is used when the decimal exponent is
// below -4 or 6 and above (the precision strconv's shortest 'g' decides
// by).
func AppendFloat(b []byte, f float64, format byte) []byte {
	d, k, ok := shortest(f)
	if !ok || format != 'e' && format != 'f' && format != 'g' {
		return strconv.AppendFloat(b, f, format, -1, 64)
	}
	if f < 0 {
		b = append(b, '-')
	}
	var buf [24]byte
	digs := digits(&buf, d)
	dp := len(digs) + k // the point's place in the digits
	if exp := dp - 1; format == 'e' || format == 'g' && (exp < -4 || exp >= 6) {
		return appendExp(b, digs, dp)
	}
	return appendFixed(b, digs, dp)
}

// appendFixed appends the digits with the point dp digits from their start
// (dp may be ≤ 0 or past them): no exponent, no trailing zero after the
// point.
func appendFixed(b, digs []byte, dp int) []byte {
	nd := len(digs)
	switch {
	case dp <= 0:
		b = append(b, '0', '.')
		for range -dp {
			b = append(b, '0')
		}
		return append(b, digs...)
	case dp >= nd:
		b = append(b, digs...)
		for range dp - nd {
			b = append(b, '0')
		}
		return b
	}
	b = append(b, digs[:dp]...)
	b = append(b, '.')
	return append(b, digs[dp:]...)
}

// appendExp appends d.ddd e±XX for the digits with the point dp digits from
// their start: at least two exponent digits.
func appendExp(b, digs []byte, dp int) []byte {
	b = append(b, digs[0])
	if len(digs) > 1 {
		b = append(b, '.')
		b = append(b, digs[1:]...)
	}
	exp := dp - 1
	sign := byte('+')
	if exp < 0 {
		sign, exp = '-', -exp
	}
	b = append(b, 'e', sign)
	switch {
	case exp < 10:
		return append(b, '0', byte(exp)+'0')
	case exp < 100:
		return append(b, pairs[2*exp], pairs[2*exp+1])
	}
	return append(b, byte(exp/100)+'0', pairs[2*(exp%100)], pairs[2*(exp%100)+1])
}

// pairs holds "00" to "99".
const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// digits writes d's decimal digits (0 < d < 10^20) at the end of buf and
// returns them: eight at a time, two by two.
func digits(buf *[24]byte, d uint64) []byte {
	i := len(buf)
	for d >= 1e8 {
		q := d / 1e8
		put8((*[8]byte)(buf[i-8:i]), uint32(d-q*1e8))
		i -= 8
		d = q
	}
	v := uint32(d)
	for v >= 100 {
		q := v / 100
		r := v - 100*q
		i -= 2
		buf[i], buf[i+1] = pairs[2*r], pairs[2*r+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		buf[i], buf[i+1] = pairs[2*v], pairs[2*v+1]
	} else {
		i--
		buf[i] = byte(v) + '0'
	}
	return buf[i:]
}

// put8 writes v < 10^8 as eight digits, leading zeros included, in one
// store.
func put8(p *[8]byte, v uint32) {
	hi, lo := v/10000, v%10000
	a, b := hi/100, hi%100
	c, d := lo/100, lo%100
	binary.LittleEndian.PutUint64(p[:], uint64(pair16[a])|uint64(pair16[b])<<16|uint64(pair16[c])<<32|uint64(pair16[d])<<48)
}

// pair16[i] is the two digits of i < 100 as the little-endian uint16 of
// their bytes.
var pair16 = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16(pairs[2*i]) | uint16(pairs[2*i+1])<<8
	}
	return t
}()

// shortest returns the shortest decimal d·10^k that reads back as |f|,
// nearest |f| among those (ties to an even d), with d free of trailing
// zeros; ok is false for zero, subnormal, infinite and NaN f.
func shortest(f float64) (d uint64, k int, ok bool) {
	u := math.Float64bits(f)
	be := int(u>>52) & 0x7ff
	if be == 0 || be == 0x7ff {
		return 0, 0, false
	}
	m := u & (1<<52 - 1)
	c := m | 1<<52
	q := be - 1075 // |f| = c·2^q
	if q <= 0 && q >= -52 && c&(1<<uint(-q)-1) == 0 {
		// an integer below 2^53: its own digits are the shortest
		d, k = c>>uint(-q), 0
	} else {
		d, k = schubfach(c, q, m == 0 && be > 1)
	}
	for d%10 == 0 {
		d /= 10
		k++
	}
	return d, k, true
}

// schubfach returns the shortest decimal in the rounding interval of the
// normal float c·2^q (lowerCloser: c is a power of two above the smallest
// normal, so the float below is half as far as the one above), nearest it.
func schubfach(c uint64, q int, lowerCloser bool) (uint64, int) {
	even := c&1 == 0
	cb := c << 2
	cbr := cb + 2
	cbl := cb - 2
	var k int
	if lowerCloser {
		cbl++
		k = floorLog10ThreeQuartersPow2(q)
	} else {
		k = floorLog10Pow2(q)
	}
	h := uint(q + floorLog2Pow10(-k) + 1) // 1 to 4
	g := &pow10[-k-minPow10]
	vbl := roundToOdd(g, cbl<<h)
	vb := roundToOdd(g, cb<<h)
	vbr := roundToOdd(g, cbr<<h)
	lower, upper := vbl, vbr
	if !even {
		lower++
		upper--
	}
	s := vb >> 2
	if s >= 10 {
		// one digit fewer, if exactly one of its two candidates is inside
		sp := s / 10
		upIn := lower <= 40*sp
		wpIn := 40*sp+40 <= upper
		if upIn != wpIn {
			if wpIn {
				sp++
			}
			return sp, k + 1
		}
	}
	uIn := lower <= 4*s
	wIn := 4*s+4 <= upper
	if uIn != wIn {
		if wIn {
			s++
		}
		return s, k
	}
	// both inside (or, by the choice of k, never neither): the nearer, ties
	// to even
	mid := 4*s + 2
	if vb > mid || vb == mid && s&1 != 0 {
		s++
	}
	return s, k
}

// roundToOdd returns ⌊g·cp/2^128⌋, its last bit set when the rest is not
// zero (so that an inexact result is never even).
func roundToOdd(g *[2]uint64, cp uint64) uint64 {
	xHi, _ := bits.Mul64(g[1], cp)
	yHi, yLo := bits.Mul64(g[0], cp)
	zLo, carry := bits.Add64(yLo, xHi, 0)
	zHi := yHi + carry
	if zLo > 1 {
		zHi |= 1
	}
	return zHi
}

// floorLog10Pow2 is ⌊log10 2^e⌋ for |e| ≤ 1650.
func floorLog10Pow2(e int) int { return (e * 1262611) >> 22 }

// floorLog10ThreeQuartersPow2 is ⌊log10(3/4·2^e)⌋ for |e| ≤ 1650.
func floorLog10ThreeQuartersPow2(e int) int { return (e*1262611 - 524031) >> 22 }

// floorLog2Pow10 is ⌊log2 10^e⌋ for |e| ≤ 1233.
func floorLog2Pow10(e int) int { return (e * 1741647) >> 19 }
