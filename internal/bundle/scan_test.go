package bundle

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// scanOne reads one record line with the scanner, as the decoder does
// inside a records array. A NUL byte follows the line: no JSON value goes
// on with it, so the scanner sees no more of a value than the line holds.
func scanOne(line []byte) (solver.Record, error) {
	s := &scanner{r: bytes.NewReader(append(bytes.Clone(line), 0)), line: 1}
	var r solver.Record
	if _, ok := s.skipSpace(); !ok {
		return r, s.ended("r")
	}
	if err := s.record(&r); err != nil {
		return r, s.errorAt("r", err)
	}
	if s.skipSpace(); s.off+int64(s.pos) != int64(len(line)) {
		return r, s.errorAt("r", s.fail(s.pos, "", s.syntax(s.pos, "after array element")))
	}
	return r, nil
}

// jsonOne reads one record line as the decoder did with encoding/json.
func jsonOne(line []byte) (solver.Record, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return solver.Record{}, errorf("r", "must be an object, got %s", te.Value)
		}
		return solver.Record{}, ioError("r", err)
	}
	if raw == nil {
		return solver.Record{}, errorf("r", "must be an object, got null")
	}
	r, err := jsonRecord("r", raw)
	if err == nil && len(bytes.TrimLeft(line[dec.InputOffset():], " \t\r\n")) > 0 {
		return r, errorf("r", "invalid JSON: data after the record")
	}
	return r, err
}

var lineSuffix = regexp.MustCompile(` \(line (\d+)\)$`)

// compareReadings checks the scanner against encoding/json on one line:
// the same record when encoding/json reads it (but a field twice, which
// the scanner refuses), an error when it does not, naming the same field
// with the same message (and the line) unless the line is not JSON.
func compareReadings(t *testing.T, line []byte) {
	t.Helper()
	want, werr := jsonOne(line)
	got, gerr := scanOne(line)
	// Import's two halves (convert.go) read as the scanner alone does
	if got2, _, gerr2 := scanKept(line); fmt.Sprint(gerr2) != fmt.Sprint(gerr) {
		t.Fatalf("%s: the scanner: %v; the reader and the converter: %v", line, gerr, gerr2)
	} else if d := bundleDiff(&Bundle{Traces: []Trace{{Records: []solver.Record{got}}}}, &Bundle{Traces: []Trace{{Records: []solver.Record{got2}}}}); gerr == nil && d != "" {
		t.Fatalf("%s: the scanner and the reader with the converter read it otherwise: %s", line, d)
	}
	var ge *Error
	if gerr != nil && !errors.As(gerr, &ge) {
		t.Fatalf("%s: scanner error %v is not a bundle.Error", line, gerr)
	}
	twice := false
	if gerr != nil {
		m := lineSuffix.FindStringSubmatch(ge.Msg)
		if m == nil {
			t.Fatalf("%s: scanner error %q does not name the line", line, ge.Msg)
		}
		// the line of the field, or the next (after the record: "]")
		if n, _ := strconv.Atoi(m[1]); m == nil || n < 1 || n > 2+bytes.Count(line, []byte{'\n'}) {
			t.Fatalf("%s: scanner error %q does not name a line of the record", line, ge.Msg)
		}
		twice = strings.HasSuffix(lineSuffix.ReplaceAllString(ge.Msg, ""), "appears twice")
	}
	switch {
	case werr == nil && gerr == nil:
		one := func(r solver.Record) *Bundle { return &Bundle{Traces: []Trace{{Records: []solver.Record{r}}}} }
		if d := bundleDiff(one(want), one(got)); d != "" {
			t.Fatalf("%s: %s", line, d)
		}
	case werr == nil:
		if !twice {
			t.Fatalf("%s: encoding/json reads %+v, the scanner refuses it: %v", line, want, gerr)
		}
	case gerr == nil:
		t.Fatalf("%s: encoding/json refuses it (%v), the scanner reads %+v", line, werr, got)
	default:
		var we *Error
		errors.As(werr, &we)
		if strings.HasPrefix(we.Msg, "invalid JSON") || strings.Contains(we.Msg, "ends early") {
			if !strings.HasPrefix(ge.Msg, "invalid JSON") && !strings.Contains(ge.Msg, "ends early") && !twice {
				t.Fatalf("%s: encoding/json: %v; scanner: %v", line, werr, gerr)
			}
			return
		}
		if ge.Path != we.Path || lineSuffix.ReplaceAllString(ge.Msg, "") != we.Msg {
			if twice {
				return // refused for a field twice before the rest was checked
			}
			t.Fatalf("%s: encoding/json: %v; scanner: %v", line, werr, gerr)
		}
	}
}

// recordLine is a random record as Encode writes it, then changed at
// random: fields reordered, white space, escapes, numbers spelt otherwise,
// values of other types, fields unknown, missing or twice, bytes cut.
func recordLine(rng *rand.Rand) []byte {
	r := solver.Record{K: rng.IntN(1 << 20), Passes: randFloat(rng), Time: randFloat(rng), Step: []string{"fw", "away", "drop", "none", "pairwise", "ρ-step", "x\"y", "a\\u00e9"}[rng.IntN(8)],
		Gamma: randFloat(rng), Batch: rng.IntN(300), Active: rng.IntN(50)}
	if rng.IntN(2) == 0 {
		r.FWSteps, r.AwaySteps, r.Drops, r.Cleanups = rng.IntN(3), rng.IntN(3), rng.IntN(2), rng.IntN(2)
	}
	if rng.IntN(2) == 0 {
		r.Objective, r.Gap = solver.F(randFloat(rng)), solver.F(randFloat(rng))
		if rng.IntN(2) == 0 {
			r.GradErr = solver.F(randFloat(rng))
		}
	}
	if rng.IntN(3) == 0 {
		r.Extra = map[string]float64{"nnz": float64(rng.IntN(50)), "t_slack": randFloat(rng), "w:v\"2": 1, "é": randFloat(rng)}
	}
	var e encoder
	e.record(&r)
	line := e.buf
	if rng.IntN(4) == 0 {
		return line // as written
	}
	// as a JSON object, changed
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		panic(err)
	}
	values := []string{`null`, `true`, `"x"`, `""`, `[]`, `[1,{"a":[null]}]`, `{}`, `{"a":1}`, `{"a":"NaN"}`, `{"":1}`, `{"a":null}`,
		`-0`, `0`, `1E5`, `1e-400`, `1e400`, `-1`, `1.5`, `12345678901234567890`, `2147483648`, `"NaN"`, `"Inf"`, `"-Inf"`, `"nan"`,
		`"5"`, `0.1e1`, `-0.0`, `01`, `-01.5`, `00`, `1.`, `1e`, `-`, `1.5e+`, `"` + strings.Repeat("s", 65) + `"`, `"\u0066w"`, `"\ud800"`, `{"a":1,"a":2}`, `{"b":1,"a":"x"}`}
	for n := 1 + rng.IntN(3); n > 0; n-- {
		switch k := recordFields[rng.IntN(len(recordFields))]; rng.IntN(6) {
		case 0:
			delete(m, k)
		case 1:
			m["unknown"+fmt.Sprint(rng.IntN(3))] = json.RawMessage(values[rng.IntN(len(values))])
		default:
			m[k] = json.RawMessage(values[rng.IntN(len(values))])
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	space := func() string { return []string{"", "", " ", "\n", "\t ", "\r\n"}[rng.IntN(6)] }
	var b strings.Builder
	b.WriteString("{" + space())
	for i, k := range keys {
		if i > 0 {
			b.WriteString("," + space())
		}
		key, _ := json.Marshal(k)
		if k == "k" && rng.IntN(3) == 0 {
			key = []byte(`"\u006b"`)
		}
		b.WriteString(string(key) + space() + ":" + space() + string(m[k]) + space())
		if rng.IntN(20) == 0 {
			b.WriteString("," + string(key) + ":" + string(m[k])) // twice
		}
	}
	b.WriteString("}")
	out := []byte(b.String())
	if rng.IntN(10) == 0 {
		out = out[:rng.IntN(len(out))]
	}
	if rng.IntN(20) == 0 && len(out) > 0 {
		chars := "{}[]\",:\\ 0-e.nx"
		out[rng.IntN(len(out))] = chars[rng.IntN(len(chars))]
	}
	return out
}

// The scanner reads records as encoding/json did, field for field and bit
// for bit, and refuses what it refused, with the same message.
func TestScannerReadsAsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for i := 0; i < 10_000; i++ {
		compareReadings(t, recordLine(rng))
	}
	for _, line := range []string{
		`null`, `[]`, `"x"`, `5`, `true`, `{}`, `{"k":1}`, `{"k":0,"passes":0,"time_s":0,"step":"fw","gamma":0,"batch":0,"active":0,"k":1}`,
		`{"k":0,"passes":0,"time_s":0,"step":"fw","gamma":0,"batch":0,"active":0,"extra":{"a":1,"a":2}}`,
		`{"k":0,"passes":0,"time_s":0,"step":"fw","gamma":0,"batch":0,"active":0,"objective":1e999}`,
		`{"k":0,"passes":0,"time_s":0,"step":"fw","gamma":0,"batch":0,"active":0,"extra":{"` + strings.Repeat("é", 257) + `":1}}`,
		`{"k":0,"passes":0,"time_s":0,"step":"fw","gamma":0,"batch":0,"active":0,"x":` + strings.Repeat("[", 10_001) + `}`,
	} {
		compareReadings(t, []byte(line))
	}
}

// FuzzDecodeRecord compares the scanner with encoding/json on any line.
func FuzzDecodeRecord(f *testing.F) {
	rng := rand.New(rand.NewPCG(33, 34))
	for range 20 {
		f.Add(recordLine(rng))
	}
	f.Fuzz(func(t *testing.T, line []byte) { compareReadings(t, line) })
}

// tokenOffset is where a json.Decoder reading doc token by token (as the
// decoder reads what is not records) finds it invalid.
func tokenOffset(t *testing.T, doc string) int64 {
	dec := json.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := dec.Token(); err != nil {
			var se *json.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("not a syntax error: %v", err)
			}
			return se.Offset
		}
	}
}

// An error in a record names its line, and an error anywhere its byte,
// in the records of any trace and in what follows them.
func TestDecodeErrorsNameLineAndByte(t *testing.T) {
	doc := validDoc(t)
	// at the n-th occurrence of old
	at := func(old string, n int) int {
		i := -1
		for ; n >= 0; n-- {
			j := strings.Index(doc[i+1:], old)
			if j < 0 {
				t.Fatalf("%q not in the document", old)
			}
			i += 1 + j
		}
		return i
	}
	lineOf := func(i int) int { return 1 + strings.Count(doc[:i], "\n") }
	for _, c := range []struct {
		name     string
		old, new string
		n        int
		path     string
		msg      func(i int, bad string) string
	}{
		{"negative batch, third trace", `"batch":`, `"batch":-`, 9, "traces[2].records[1].batch",
			func(i int, _ string) string {
				return fmt.Sprintf("must be non-negative, got -%s (line %d)", regexp.MustCompile(`\d+`).FindString(doc[i+8:]), lineOf(i))
			}},
		{"k not increasing, last trace", `{"k":3,`, `{"k":1,`, 3, "traces[3].records[3].k",
			func(i int, _ string) string {
				return fmt.Sprintf("must be greater than the previous record's k (2), got 1 (line %d)", lineOf(i))
			}},
		{"invalid record, second trace", `{"k":2,`, `{"k":2,,`, 1, "traces[1].records[2]",
			func(i int, bad string) string {
				return fmt.Sprintf("invalid JSON at byte %d: invalid character ',' looking for beginning of object key string (line %d)", i+7, lineOf(i))
			}},
		{"invalid header after records", `,"seed":6`, `,x"seed":6`, 0, "traces[1]",
			func(i int, bad string) string {
				return fmt.Sprintf("invalid JSON at byte %d: invalid character 'x' looking for beginning of object key string", tokenOffset(t, bad))
			}},
	} {
		i := at(c.old, c.n)
		bad := doc[:i] + c.new + doc[i+len(c.old):]
		_, err := Decode(strings.NewReader(bad))
		var be *Error
		if !errors.As(err, &be) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := c.msg(i, bad); be.Path != c.path || be.Msg != want {
			t.Errorf("%s: %q: %q; want %q: %q", c.name, be.Path, be.Msg, c.path, want)
		}
	}
}

// The content digest of an import is the one of its records as Encode
// writes them, however they were written.
func TestContentDigestOfRecordsAsRead(t *testing.T) {
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	doc := string(encodeT(t, testBundle(rand.New(rand.NewPCG(41, 42)), 300)))
	run := string(encodeT(t, runBundle(2, 300)))
	for name, d := range map[string]string{
		"as written":         doc,
		"a run as written":   run,
		"numbers spelt long": strings.NewReplacer(`"passes":1,`, `"passes":1.0e0,`, `"active":0,`, `"active":-0,`).Replace(doc),
		"floats spelt long":  regexp.MustCompile(`("gamma":0\.\d+)`).ReplaceAllString(run, "${1}0"),
		"a step escaped":     strings.ReplaceAll(run, `"step":"fw"`, `"step":"\u0066w"`),
		"white space":        strings.ReplaceAll(run, `,"active":`, `, "active":`),
		"extra reordered":    regexp.MustCompile(`"extra":\{("nnz":[^,]*),("t_slack":[^}]*)\}`).ReplaceAllString(run, `"extra":{$2,$1}`),
		"grad_err null":      regexp.MustCompile(`(,"objective":[^,]*),"gap":`).ReplaceAllString(run, `$1,"grad_err":null,"gap":`),
		"exponents spelt":    strings.NewReplacer("e-05", "e-5", "e+06", "E6").Replace(run),
		"a digit more":       regexp.MustCompile(`("gamma":0\.\d{15})(\d)`).ReplaceAllString(run, "${1}${2}1"),
		"a digit fewer":      regexp.MustCompile(`("objective":\d+\.\d{10,})\d,`).ReplaceAllString(run, "${1},"),
		"a digit changed":    regexp.MustCompile(`("gap":\d+\.\d{10,})\d,`).ReplaceAllString(run, "${1}5,"),
	} {
		if name != "as written" && name != "a run as written" && (d == doc || d == run) {
			t.Fatalf("%s: the document is unchanged", name)
		}
		b, err := Decode(strings.NewReader(d))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := newContentDigest()
		for i := range b.Traces {
			for j := range b.Traces[i].Records {
				c.record(&b.Traces[i].Records[j], nil, 0)
			}
			c.endTrace(i)
		}
		want, err := c.sum(b)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Import(context.Background(), st, strings.NewReader(d))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Digest != want {
			t.Errorf("%s: digest %s, the records encoded %s", name, res.Digest, want)
		}
	}
}

// checkFastFloat fails t when fastFloat reads s and strconv.ParseFloat
// reads it otherwise (or refuses it), and reports whether fastFloat read it.
func checkFastFloat(t testing.TB, s string) bool {
	x, ok := fastFloat([]byte(s))
	if !ok {
		return false
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Float64bits(x) != math.Float64bits(want) {
		t.Fatalf("%s: fastFloat %v (%x), strconv %v (%x, %v)", s, x, math.Float64bits(x), want, math.Float64bits(want), err)
	}
	return true
}

// fastFloat reads what it reads as strconv.ParseFloat does, bit for bit:
// the shortest forms the encoder writes for random float64s of every
// exponent (subnormals and the largest included), the same numbers with
// one more or one fewer digit, numbers of 16 to 19 digits near halfway
// points, and edge cases; and it reads most of the encoder's forms itself.
func TestFastFloatIsParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	taken, written, writtenTaken := 0, 0, 0
	for i := 0; i < 400_000; i++ {
		var s string
		enc := false
		switch i % 8 {
		case 0:
			s, enc = strconv.FormatFloat(randFloat(rng), 'g', -1, 64), true
		case 1:
			s, enc = strconv.FormatFloat(rng.Float64()*math.Pow(10, float64(rng.IntN(50)-25)), 'g', -1, 64), true
		case 2:
			s = strconv.FormatFloat(rng.NormFloat64(), 'f', rng.IntN(20), 64)
		case 3:
			s = fmt.Sprintf("%d.%de%d", rng.Int64N(1<<53), rng.IntN(1000), rng.IntN(60)-30)
		case 4:
			// any bit pattern: subnormals, the largest exponents
			x := math.Float64frombits(rng.Uint64() &^ (1 << 63 >> rng.IntN(2)))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				x = math.MaxFloat64
			}
			s, enc = strconv.FormatFloat(x, 'g', -1, 64), true
		case 5:
			// 16 to 19 digits, up to the largest a uint64 holds
			s = fmt.Sprintf("%de%d", rng.Uint64N(1e19-1e15)+1e15, rng.IntN(700)-360)
		case 6:
			// the exact value of a float64 or the halfway point above it,
			// to 17 to 25 digits: the cases hardest to round
			x := math.Float64frombits(rng.Uint64() &^ (1 << 63))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				x = 1
			}
			bf := new(big.Float).SetPrec(200).SetFloat64(x)
			if rng.IntN(2) == 0 {
				up := new(big.Float).SetPrec(200).SetFloat64(math.Nextafter(x, math.Inf(1)))
				bf.Add(bf, up).Quo(bf, big.NewFloat(2))
			}
			s = bf.Text('e', 16+rng.IntN(9))
		default:
			// the encoder's form with its last digit changed, or cut
			s = strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)), 'g', -1, 64)
			if j := strings.LastIndexAny(s, "123456789"); j > 0 && rng.IntN(2) == 0 {
				s = s[:j] + string(rune('0'+rng.IntN(10))) + s[j+1:]
			} else if len(s) > 3 {
				s = s[:len(s)-1]
			}
		}
		if x, err := strconv.ParseFloat(s, 64); err != nil || math.Abs(x) < 0x1p-1022 {
			enc = false // not a number, or subnormal: strconv's
		}
		ok := checkFastFloat(t, s)
		if ok {
			taken++
		}
		if enc {
			written++
			if ok {
				writtenTaken++
			}
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.0e5", "0e-400", "1e22", "1e23", "9007199254740992", "9007199254740993", "9007199254740995",
		"9007199254740991e-22", "18446744073709551615", "18446744073709551616", "9999999999999999999", "1.7976931348623157e308",
		"1.7976931348623158e308", "1.7976931348623159e308", "1e308", "1e309", "-1e400", "2.2250738585072014e-308", "2.2250738585072011e-308",
		"2.225073858507201e-308", "4.9406564584124654e-324", "5e-324", "2.4703282292062327e-324", "1e-323", "1e-400", "1e-348", "1e-349",
		"1e347", "123456789012345678", "0.000000000000000000000001", "0.1", "0.2", "0.30000000000000004", "-1.2345678901234567e-5",
		"7.450580596923828e-9", "1e", "-", "", "01", "1.", ".5", "+1", "1e+", `"NaN"`, "null", "1.5e+3", "1E-3", "1_0", "0x10", "inf"} {
		checkFastFloat(t, s)
	}
	if taken < 250_000 {
		t.Errorf("fastFloat read %d of 400 000 numbers: the fast path is hardly taken", taken)
	}
	if writtenTaken < written*85/100 { // less: exact values of 17 digits, the halfway case Eisel-Lemire leaves to strconv
		t.Errorf("fastFloat read %d of the encoder's %d forms", writtenTaken, written)
	}
}

// The powers of ten fastFloat multiplies by: each within one unit of its
// last bit below the exact power, its top bit set, its power of two the
// one strconv's integer approximation gives.
func TestPow10Table(t *testing.T) {
	tab := pow10Table()
	for e := pow10Min; e <= pow10Max; e++ {
		p := tab[e-pow10Min]
		if p.hi>>63 != 1 {
			t.Fatalf("1e%d: top bit not set: %x %x", e, p.hi, p.lo)
		}
		// mant·2^(exp2−128) ≤ 10^e < (mant+1)·2^(exp2−128)
		mant := new(big.Int).Lsh(new(big.Int).SetUint64(p.hi), 64)
		mant.Or(mant, new(big.Int).SetUint64(p.lo))
		lo := new(big.Rat).SetInt(mant)
		hi := new(big.Rat).SetInt(new(big.Int).Add(mant, big.NewInt(1)))
		scale := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(abs(pow10Exp2(e)-128))))
		if pow10Exp2(e) >= 128 {
			lo.Mul(lo, scale)
			hi.Mul(hi, scale)
		} else {
			lo.Quo(lo, scale)
			hi.Quo(hi, scale)
		}
		var want *big.Rat
		if e >= 0 {
			want = new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
		} else {
			want = new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil))
		}
		if lo.Cmp(want) > 0 || hi.Cmp(want) <= 0 {
			t.Fatalf("1e%d: the table's mantissa %x%016x (2^%d) is not 10^%d rounded down", e, p.hi, p.lo, pow10Exp2(e), e)
		}
	}
}

// FuzzFastFloat: whatever fastFloat reads, strconv.ParseFloat reads the
// same, bit for bit.
func FuzzFastFloat(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "0.30000000000000004", "1.7976931348623157e308", "5e-324", "2.2250738585072011e-308",
		"9007199254740993", "18446744073709551615", "1e-348", "1e347", "-7.450580596923828e-9", "123456789.12345678e-30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFastFloat(t, s) })
}

// TestScannerFollowsTheDeclaration: the fields the scanner reads by its own
// switch are the declaration's first ones, in its order, the required ones
// first; every other declared field is read by its kind (laterFields).
func TestScannerFollowsTheDeclaration(t *testing.T) {
	fs := recordfields.Fields
	if len(fs) < numRecordFields {
		t.Fatalf("%d declared fields, the scanner knows %d", len(fs), numRecordFields)
	}
	for i, name := range recordFields {
		if fs[i].JSON != name {
			t.Errorf("field %d: the scanner reads %q where the declaration has %q", i, name, fs[i].JSON)
		}
		if fs[i].Required != (i < requiredFields) {
			t.Errorf("field %q: required %v in the declaration, %v in the scanner", name, fs[i].Required, i < requiredFields)
		}
		if recordField([]byte(name)) != i {
			t.Errorf("recordField(%q) = %d, want %d", name, recordField([]byte(name)), i)
		}
	}
	for _, f := range fs[numRecordFields:] {
		if laterFields[f.JSON] == nil {
			t.Errorf("the declared field %q is neither the scanner's nor read by its kind", f.JSON)
		}
	}
}

// checkEncoderForm fails t when readNumber says s is the encoder's form of
// the number it reads and the encoder writes that number otherwise, or
// reads it otherwise than strconv.ParseFloat; it reports what readNumber
// said.
func checkEncoderForm(t testing.TB, s string) bool {
	x, ok, enc := readNumber([]byte(s), true)
	if !ok {
		if enc {
			t.Fatalf("%s: not read, but said to be the encoder's form", s)
		}
		return false
	}
	if want, err := strconv.ParseFloat(s, 64); err != nil || math.Float64bits(x) != math.Float64bits(want) {
		t.Fatalf("%s: read %v (%x), strconv %v (%x, %v)", s, x, math.Float64bits(x), want, math.Float64bits(want), err)
	}
	if w := string(appendFloat(nil, x)); enc != (w == s) && enc {
		t.Fatalf("%s: said to be the encoder's form, which is %s", s, w)
	}
	return enc
}

// readNumber says a number is in the encoder's form only when it is: for
// the encoder's own forms of random float64s (of every exponent, short and
// long) and for other forms of the same and nearby numbers (other digits,
// one digit more or fewer, the last changed, %e, %f and %g at other
// precisions, exponents written otherwise); and it says so for nearly all
// of the encoder's forms (of normal numbers).
func TestEncoderForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	written, said := 0, 0
	for i := 0; i < 300_000; i++ {
		var x float64
		switch i % 5 {
		case 0:
			x = math.Float64frombits(rng.Uint64())
		case 1:
			x = rng.Float64() * math.Pow(10, float64(rng.IntN(40)-20))
		case 2:
			// short decimals: k/500, steps, counts
			x = float64(rng.IntN(1_000_000)) / float64([]int{1, 2, 10, 500, 1000, 1 << 20}[rng.IntN(6)])
		case 3:
			x = math.Nextafter(math.Pow(10, float64(rng.IntN(40)-20)), math.Inf(rng.IntN(3)-1))
		default:
			x = rng.NormFloat64() * math.Pow(2, float64(rng.IntN(2000)-1000))
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if checkEncoderForm(t, s) {
			said++
		}
		if x != 0 && math.Abs(x) >= 0x1p-1022 && math.Abs(x) != math.Pow(2, math.Round(math.Log2(math.Abs(x)))) {
			written++
		}
		// other forms of x and of numbers near it
		others := []string{
			strconv.FormatFloat(x, 'e', rng.IntN(20), 64),
			strconv.FormatFloat(x, 'f', rng.IntN(25), 64),
			strconv.FormatFloat(x, 'g', 1+rng.IntN(19), 64),
			strconv.FormatFloat(x, 'e', 16, 64),
			strconv.FormatFloat(x, 'e', 15, 64),
			strings.Replace(s, "e+0", "e+", 1),
			strings.Replace(s, "e-0", "e-", 1),
			strings.Replace(s, "e+", "e", 1),
			strings.Replace(s, "e", "E", 1),
			s + "0",
		}
		if j := strings.LastIndexAny(s, "0123456789"); j >= 0 && !strings.Contains(s, "e") {
			for _, c := range "0123456789" {
				others = append(others, s[:j]+string(c)+s[j+1:], s[:j+1]+string(c))
			}
		} else if j := strings.IndexByte(s, 'e'); j > 0 {
			for _, c := range "0123456789" {
				others = append(others, s[:j-1]+string(c)+s[j:], s[:j]+string(c)+s[j:])
			}
		}
		for _, o := range others {
			checkEncoderForm(t, o)
		}
	}
	// subnormals and powers of two, at every precision
	for i := 0; i < 2000; i++ {
		x := math.Float64frombits(rng.Uint64N(1 << 52 >> rng.IntN(52)))
		if i%2 == 1 {
			x = math.Ldexp(1, rng.IntN(2000)-1000)
		}
		for p := -1; p < 18; p++ {
			checkEncoderForm(t, strconv.FormatFloat(x, 'g', p, 64))
			checkEncoderForm(t, strconv.FormatFloat(x, 'e', p, 64))
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "00", "00.5", "-00.25", "000.001", "01", "1", "-1", "1e+06", "1e6", "1000000", "999999", "100000", "1e+05", "0.0001", "1e-04",
		"1e-05", "0.00001", "1.5e-05", "123456.5", "1.234565e+05", "5e-324", "2.2250738585072014e-308", "1.7976931348623157e+308",
		"9007199254740993", "9.007199254740993e+15", "0.30000000000000004", "0.3", "0.1", "1.0", "1.", "+1", "1e+6", "1e+006"} {
		checkEncoderForm(t, s)
	}
	if said < written*99/100 {
		t.Errorf("readNumber said %d of the encoder's %d forms (normal, not powers of two) were its", said, written)
	}
}

// FuzzEncoderForm: readNumber says a number is in the encoder's form only
// when it is.
func FuzzEncoderForm(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "0.30000000000000004", "1.7976931348623157e+308", "5e-324", "1e+06", "1e-05",
		"0.0001", "123456", "9007199254740993", "-7.450580596923828e-09", "1.2345678901234567e-30", "3.141592653589793"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEncoderForm(t, s) })
}

// eightDigits reads every eight ASCII digits as their number and refuses
// every eight bytes with one that is not a digit.
func TestEightDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for i := 0; i < 200_000; i++ {
		var b [8]byte
		for j := range b {
			b[j] = byte('0' + rng.IntN(10))
		}
		if i%2 == 1 {
			b[rng.IntN(8)] = byte(rng.IntN(256))
		}
		want, err := strconv.ParseUint(string(b[:]), 10, 64)
		got, ok := eightDigits(binary.LittleEndian.Uint64(b[:]))
		if ok != (err == nil) || ok && got != want {
			t.Fatalf("%q: eightDigits %d %v, strconv %d %v", b, got, ok, want, err)
		}
	}
}

// skipDigits ends where a byte-at-a-time reading of the digits ends, for
// runs of every length and every byte after them.
func TestSkipDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for range 100_000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(6) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = '0' + byte(rng.IntN(10))
			}
		}
		i := rng.IntN(len(b) + 1)
		want := i
		for want < len(b) && '0' <= b[want] && b[want] <= '9' {
			want++
		}
		if got := skipDigits(b, i); got != want {
			t.Fatalf("skipDigits(%q, %d) = %d, want %d", b, i, got, want)
		}
	}
}

// Where quickFloat reads a number, number (the JSON check) accepts it and
// ends at the same byte, and strconv reads the same float64.
func TestQuickFloatIsNumberThenFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	const chars = "00123456789.eE+--x,}"
	read := 0
	for range 200_000 {
		b := make([]byte, 1+rng.IntN(24))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		if rng.IntN(2) == 0 {
			b = strconv.AppendFloat(b[:0], rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)), 'g', -1, 64)
			b = append(b, ",}"[rng.IntN(2)])
		}
		b[0] = "-0123456789"[rng.IntN(11)]
		s := &scanner{buf: b}
		end, ok := s.quickFloat(0, fieldGamma)
		if !ok {
			continue
		}
		read++
		want, err := s.number(0)
		if err != nil || want != end {
			t.Fatalf("%q: quickFloat ends at %d, number at %d (%v)", b, end, want, err)
		}
		x, err := strconv.ParseFloat(string(b[:end]), 64)
		if err != nil || math.Float64bits(x) != math.Float64bits(s.quickX[fieldGamma]) {
			t.Fatalf("%q: quickFloat reads %v, strconv %v (%v)", b, s.quickX[fieldGamma], x, err)
		}
	}
	if read < 50_000 {
		t.Errorf("quickFloat read only %d of 200 000", read)
	}
}
