package fw

import (
	"encoding/json"
	"math"
	"slices"
)

// finiteCount is the number of finite values in m.
func finiteCount(m map[string]float64) int {
	c := 0
	for _, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			c++
		}
	}
	return c
}

// AppendJSONMetrics appends m's finite values as a JSON object with sorted
// keys, as encoding/json writes a map[string]float64 (non-finite values
// left out).
func AppendJSONMetrics(b []byte, m map[string]float64) []byte {
	var small [16]string
	keys := small[:0]
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = AppendJSONFloat(b, m[k])
	}
	return append(b, '}')
}

func appendJSONPtr(b []byte, p *float64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return AppendJSONFloat(b, *p)
}

// AppendJSONFloat appends a finite f as encoding/json writes a float64: the
// shortest representation that reads back to f, in 'f' format unless
// |f| < 1e-6 or |f| ≥ 1e21, then in 'e' format with a one-digit negative
// exponent written without its leading zero (1e-07 as 1e-7).
func AppendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs == 0 || abs >= 1e-6 && abs < 1e21 {
		return AppendFloat(b, f, 'f')
	}
	b = AppendFloat(b, f, 'e')
	n := len(b)
	if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// AppendJSONString appends s as a JSON string, the bytes encoding/json
// writes: directly when it holds only characters encoding/json writes as
// they are (printable ASCII but the quote, the backslash and the HTML
// characters <, > and &, which it escapes), through encoding/json otherwise.
func AppendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON[c] reports whether encoding/json writes the byte c of a string
// as it is.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
