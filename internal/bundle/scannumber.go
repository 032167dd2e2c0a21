package bundle

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
// exactFloat), the others with parseFloat.
func number(v []byte) (float64, error) {
	if x, ok := exactFloat(v); ok {
		return x, nil
	}
	return parseFloat("", v)
}

// exactFloat reads a JSON number whose digits make an integer m of at
// most 2⁵³ and whose power of ten e is at most 22 either way: both are
// float64s exactly, so m·10^e (or m/10^−e), one correctly rounded
// operation, is the float64 nearest to the number, which is what
// strconv.ParseFloat gives (Clinger's fast path). Any other value (more
// digits, a larger power, not a number) reports false.
func exactFloat(v []byte) (float64, bool) {
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
		if nd == 16 { // 17 digits are more than 2⁵³
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
			if nd == 16 {
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
	if i != len(v) || m > 1<<53 {
		return 0, false
	}
	x := float64(m)
	switch {
	case m == 0 || exp == 0:
	case 0 < exp && exp <= 22:
		x *= pow10[exp]
	case -22 <= exp && exp < 0:
		x /= pow10[-exp]
	default:
		return 0, false
	}
	if neg {
		x = -x
	}
	return x, true
}
