package bundle

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"sync"

	"github.com/fwlab/fwlab/internal/recordfields"
)

// numberForms are the numbers of a chunk's records that were read in the
// encoder's form, kept as read: an import's digest, which hashes the
// records as the encoder writes them, copies them instead of writing them
// (contentDigest). Telling the form while the number is read costs about a
// third of writing it; apart, reading it again, as much.
//
// A record whose text is the encoder's own (canonical) has that text kept
// instead, which the digest hashes as it is.
type numberForms struct {
	text  []byte       // the numbers' text, and the whole records' (a decoder's batch: all its records' text, see convert.go)
	nums  []numberForm // record by record
	first []int32      // each record's first in nums
	whole []textSpan   // each record's text in text when kept whole (n > 0)
}

// textSpan is text[off:off+n].
type textSpan struct{ off, n uint32 }

type numberForm struct {
	bits   uint64 // the float64 read
	off, n uint32 // its text: text[off:off+n]
}

func (f *numberForms) reset() {
	f.text, f.nums, f.first, f.whole = f.text[:0], f.nums[:0], f.first[:0], f.whole[:0]
}

// endRecord keeps a record read in buf (rec: where): its text when it is
// the encoder's (whole), else its numbers that are (nums).
func (f *numberForms) endRecord(buf []byte, rec span, whole bool, nums []pendingForm) {
	f.first = append(f.first, int32(len(f.nums)))
	if whole {
		f.whole = append(f.whole, textSpan{uint32(len(f.text)), uint32(rec.hi - rec.lo)})
		f.text = append(f.text, buf[rec.lo:rec.hi]...)
		return
	}
	f.whole = append(f.whole, textSpan{})
	for _, n := range nums {
		f.nums = append(f.nums, numberForm{bits: n.bits, off: uint32(len(f.text)), n: uint32(n.at.hi - n.at.lo)})
		f.text = append(f.text, buf[n.at.lo:n.at.hi]...)
	}
}

// keepInPlace is endRecord for a record whose text is in f.text already
// (at rec, as the converter reads it), its numbers there too.
func (f *numberForms) keepInPlace(rec span, whole bool, nums []pendingForm) {
	f.first = append(f.first, int32(len(f.nums)))
	if whole {
		f.whole = append(f.whole, textSpan{uint32(rec.lo), uint32(rec.hi - rec.lo)})
		return
	}
	f.whole = append(f.whole, textSpan{})
	for _, n := range nums {
		f.nums = append(f.nums, numberForm{bits: n.bits, off: uint32(n.at.lo), n: uint32(n.at.hi - n.at.lo)})
	}
}

// wholeText is record j's text when it was kept whole, else nil.
func (f *numberForms) wholeText(j int) []byte {
	if j >= len(f.whole) || f.whole[j].n == 0 {
		return nil
	}
	w := f.whole[j]
	return f.text[w.off : w.off+w.n]
}

// of are the numbers of record j kept.
func (f *numberForms) of(j int) []numberForm {
	if j >= len(f.first) {
		return nil
	}
	end := len(f.nums)
	if j+1 < len(f.first) {
		end = int(f.first[j+1])
	}
	return f.nums[f.first[j]:end]
}

// float reads a record's number (number), keeping it in s.forms when
// there is one and the number is in the encoder's form (lastEnc says
// whether it is).
func (s *scanner) float(sp span) (float64, error) {
	v := s.buf[sp.lo:sp.hi]
	x, ok, enc := readNumber(v, s.forms != nil)
	if !ok {
		s.lastEnc = false
		return parseFloat("", v)
	}
	s.readForm(x, sp, enc)
	return x, nil
}

// readForm notes that the number at sp was read as x, in the encoder's
// form or not (enc): endRecord keeps it.
func (s *scanner) readForm(x float64, sp span, enc bool) {
	s.lastEnc = enc
	if enc && s.forms != nil {
		s.pending = append(s.pending, pendingForm{math.Float64bits(x), sp})
	}
}

// fieldFloat is float for the value of the record's field f, read
// already by quickFloat when it could.
func (s *scanner) fieldFloat(f int) (float64, error) {
	if s.quick&(1<<f) == 0 {
		return s.float(s.spans[f])
	}
	s.readForm(s.quickX[f], s.spans[f], s.quickEnc&(1<<f) != 0)
	return s.quickX[f], nil
}

// pendingForm is a number of the record being read in the encoder's form:
// its bits and where it is in the scanner's buffer.
type pendingForm struct {
	bits uint64
	at   span
}

// quickFloat reads the number at buf[i], the value of the record's float
// field f, as it finds where it ends (once, where number and then float
// would read it twice), when it is a JSON number followed by more of the
// buffer; false leaves it to them (another field, a number that is not
// JSON's or that may go on).
func (s *scanner) quickFloat(i, f int) (int, bool) {
	if f < 0 || !floatField[f] {
		return 0, false
	}
	b, j := s.buf, i
	if b[j] == '-' {
		j++
	}
	if j+1 < len(b) && b[j] == '0' && isDigit(b[j+1]) {
		return 0, false // a leading zero: not JSON
	}
	x, n, ok, enc := readNumberPrefix(b[i:], s.forms != nil || s.quickForms)
	if !ok || i+n >= len(b) {
		return 0, false // not read, or it may go on: number says so, and the record is read again
	}
	s.quickX[f] = x
	s.quick |= 1 << f
	if enc {
		s.quickEnc |= 1 << f
	} else {
		s.quickEnc &^= 1 << f
	}
	return i + n, true
}

// floatField are the scanner's fields whose values are numbers read by
// float (the Float and OptFloat fields of the declaration).
var floatField = func() (t [numRecordFields]bool) {
	for i := range t {
		k := recordfields.Fields[i].Kind
		t[i] = k == recordfields.Float || k == recordfields.OptFloat
	}
	return t
}()

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
	x, ok, _ := readNumber(v, false)
	return x, ok
}

// readNumber is fastFloat, and when form is set it also reports whether v
// is what the encoder writes for the number (encoderForm).
func readNumber(v []byte, form bool) (x float64, ok, enc bool) {
	x, n, ok, enc := readNumberPrefix(v, form)
	if n != len(v) {
		return 0, false, false
	}
	return x, ok, enc
}

// readNumberPrefix is readNumber for the number v starts with: n is where
// it ends (the first byte that cannot go on with it).
func readNumberPrefix(v []byte, form bool) (x float64, n int, ok, enc bool) {
	i, neg := 0, false
	if i < len(v) && v[i] == '-' {
		neg = true
		i++
	}
	var m uint64
	nd, exp := 0, 0
	start := i
	var at numberParts
	at.intLo = i
	for ; i < len(v) && isDigit(v[i]); i++ {
		if m == 0 && v[i] == '0' {
			continue
		}
		if nd == 19 { // 20 digits may be more than 2⁶⁴
			return 0, 0, false, false
		}
		m, nd = 10*m+uint64(v[i]-'0'), nd+1
	}
	if i == start {
		return 0, 0, false, false
	}
	at.intHi = i
	if i < len(v) && v[i] == '.' {
		start = i + 1
		for i++; i < len(v) && isDigit(v[i]); i++ {
			if m != 0 && nd <= 11 && i+8 <= len(v) {
				// eight digits at once (the digits of a long fraction)
				if d, ok := eightDigits(binary.LittleEndian.Uint64(v[i:])); ok {
					m, nd, exp, i = m*1e8+d, nd+8, exp-8, i+7
					continue
				}
			}
			if m == 0 && v[i] == '0' {
				exp--
				continue
			}
			if nd == 19 {
				return 0, 0, false, false
			}
			m, nd, exp = 10*m+uint64(v[i]-'0'), nd+1, exp-1
		}
		if i == start {
			return 0, 0, false, false
		}
	}
	at.fracHi, at.eAt = i, -1
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		at.eAt = i
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
		at.eDigits = i
		for ; i < len(v) && isDigit(v[i]); i++ {
			if e > 1000 {
				return 0, 0, false, false
			}
			e = 10*e + int(v[i]-'0')
		}
		if i == start {
			return 0, 0, false, false
		}
		exp += sign * e
	}
	v = v[:i]
	if at.eAt < 0 {
		at.eAt = len(v) // none
	}
	if m == 0 {
		if neg {
			return math.Copysign(0, -1), i, true, form && string(v) == "-0"
		}
		return 0, i, true, form && string(v) == "0"
	}
	if m <= 1<<53 && -22 <= exp && exp <= 22 {
		x = float64(m)
		if exp > 0 {
			x *= pow10[exp]
		} else if exp < 0 {
			x /= pow10[-exp]
		}
		if neg {
			x = -x
		}
	} else if x, ok = eiselLemire(m, exp, neg); !ok {
		return 0, 0, false, false
	}
	return x, i, true, form && encoderForm(v, &at, m, nd, exp, x)
}

// allDigits reports whether the eight bytes of x are ASCII digits.
func allDigits(x uint64) bool {
	return ((x+0x4646464646464646)|(x-0x3030303030303030))&0x8080808080808080 == 0
}

// eightDigits is the number of the eight ASCII digits of x (little-endian:
// the first in its low byte), or false when they are not all digits
// (Lemire's fast_float, parse_eight_digits_unrolled).
func eightDigits(x uint64) (uint64, bool) {
	if !allDigits(x) {
		return 0, false
	}
	x -= 0x3030303030303030
	x = x*10 + x>>8
	x = ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return x & 0xFFFFFFFF, true
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

// encoderForm reports whether v, the number m·10^exp of nd digits (m > 0)
// read as x, is exactly what the encoder writes for x (appendFloat:
// strconv's shortest form that reads back as x, in %g's layout), without
// writing x in that form: an import's digest hashes the encoder's form of
// every number and takes v as it is when this says so. It is sure or says
// false (x subnormal, a power of two, too close to call: those are written
// by strconv).
//
// v is in that form when its digits are the fewest of any decimal that
// reads back as x and, of the decimals of that many digits, the nearest to
// x; and when it is laid out as %g lays out those digits. For at most 15
// digits (x normal) the first holds always: two decimals of at most 15
// digits never read as the same float64 (their spacing is more than a
// float64's: 10⁻¹⁵ of the value at least, against 2⁻⁵² at most), so no
// shorter decimal reads as x and no other of as many digits. For 16 and 17
// digits it is checked (nearestOfFewest); more digits are never the
// fewest.
func encoderForm(v []byte, at *numberParts, m uint64, nd, exp int, x float64) bool {
	for m%10 == 0 {
		m, nd, exp = m/10, nd-1, exp+1
	}
	fb := math.Float64bits(x)
	// (readNumber reads no subnormal: strconv does)
	if e := fb >> 52 & 0x7FF; e == 0 || e == 0x7FF || nd > 17 {
		return false
	}
	if nd > 15 && !nearestOfFewest(m, exp, fb) {
		return false
	}
	// %g of the shortest precision, for the digits d₁…dₙ (d₁, dₙ not 0) of
	// 0.d₁…dₙ·10^dp: %e below 1e-4 and from 1e6 up (d₁[.d₂…dₙ]e±XX, at
	// least two digits of exponent), else %f (0.0…0d₁…dₙ, d₁….…dₙ or
	// d₁…dₙ0…0)
	frac := at.fracHi > at.intHi
	if frac && v[at.fracHi-1] == '0' {
		return false // a fraction ends in a digit not 0
	}
	if e := nd + exp - 1; e < -4 || e >= 6 {
		if at.eAt == len(v) || v[at.eAt] != 'e' || at.eDigits != at.eAt+2 ||
			at.intHi-at.intLo != 1 || v[at.intLo] == '0' {
			return false
		}
		digits := v[at.eDigits:]
		if e < 0 {
			e = -e
		}
		if e < 10 {
			return len(digits) == 2 && digits[0] == '0'
		}
		return digits[0] != '0'
	}
	if at.eAt != len(v) {
		return false
	}
	if v[at.intLo] == '0' {
		return at.intHi-at.intLo == 1 && frac
	}
	return true
}

// numberParts are where the parts of a number read are: its integer's
// digits v[intLo:intHi], its fraction's v[intHi+1:fracHi] (if any), the
// exponent's letter v[eAt] (len(v): none) and its digits v[eDigits:].
type numberParts struct{ intLo, intHi, fracHi, eAt, eDigits int }

// nearestOfFewest reports whether the decimal m·10^exp of 16 or 17 digits
// (the last not 0), which reads as the float64 x of bits fb (normal), is
// the nearest to x of the decimals of as many digits while no decimal of
// fewer digits reads as x; false also when it cannot tell for sure.
//
// In units of x's last bit (ulp): the decimal is x + δ, its neighbours of
// one digit fewer are x + δ − r·q and x + δ + (10−r)·q (r its last digit, q
// = 10^exp/ulp = (M+δ)/m where x = M·ulp), and x reads back from [x − ½,
// x + ½] (unless x is a power of two: false). δ comes from m·10^exp to 128
// bits (Eisel-Lemire's product, always the wider one): the bits below the
// 53 of x's mantissa, exact to about 2⁻⁷⁰; q from δ. Each comparison keeps
// a margin of 10⁻⁷ ulp, far above the float64 arithmetic's errors (about
// 10⁻¹⁵).
func nearestOfFewest(m uint64, exp int, fb uint64) bool {
	M := fb&(1<<52-1) | 1<<52
	if M == 1<<52 || exp < pow10Min || exp > pow10Max {
		return false
	}
	pow := pow10Table()[exp-pow10Min]
	man := m << uint(bits.LeadingZeros64(m))
	hi, lo := bits.Mul64(man, pow.hi)
	yHi, _ := bits.Mul64(man, pow.lo)
	var c uint64
	lo, c = bits.Add64(lo, yHi, 0)
	hi += c
	if hi>>63 == 0 {
		hi, lo = hi<<1|lo>>63, lo<<1
	}
	mant := hi >> 11
	f := float64(hi&0x7FF<<53|lo>>11) / (1 << 64) // in [0, 1]
	const margin = 1e-7
	var delta float64
	switch {
	case f < 0.5-margin:
		delta = f
	case f > 0.5+margin:
		delta, mant = f-1, mant+1
	default:
		return false
	}
	if mant != M {
		return false // not x's mantissa: not to be trusted
	}
	q := (float64(M) + delta) / float64(m)
	r := float64(m % 10)
	return math.Abs(delta) < q/2-margin &&
		math.Abs(delta-r*q) > 0.5+margin && math.Abs(delta+(10-r)*q) > 0.5+margin
}
