package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func readSmall(t testing.TB) *Bundle {
	t.Helper()
	f, err := os.Open("testdata/digest-small.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The golden digest was computed by testdata/digest.py, an independent
// implementation of the documented encoding, from the bundle's JSON.
func TestDigestGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/digest-small.sha256")
	if err != nil {
		t.Fatal(err)
	}
	b := readSmall(t)
	if got := Digest(b); got != strings.TrimSpace(string(want)) {
		t.Fatalf("Digest = %s, want the golden %s", got, want)
	}
	if err := CheckDigest(b); err != nil {
		t.Fatalf("CheckDigest of the golden bundle: %v", err)
	}
}

// The digest names the traces, not their spelling: a re-encoded bundle (keys
// reordered, numbers written differently, white space) carries the same
// digest, and Encode writes the digest of what it writes.
func TestDigestSurvivesReencoding(t *testing.T) {
	b := readSmall(t)
	want := Digest(b)
	var buf bytes.Buffer
	if err := Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	b2, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Digest != want || Digest(b2) != want {
		t.Fatalf("after a round trip: carried %s, computed %s, want %s", b2.Digest, Digest(b2), want)
	}
	// a rewrite with sorted keys, indented, numbers respelt
	var doc map[string]any
	raw, _ := os.ReadFile("testdata/digest-small.json")
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(doc, "", "   ")
	out = bytes.ReplaceAll(out, []byte(`"passes": 2,`), []byte(`"passes": 2.000e0,`))
	b3, err := Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDigest(b3); err != nil {
		t.Fatalf("a respelt bundle: %v", err)
	}
	// a NaN's payload bits do not count
	b3.Traces[0].Records[1].Gamma = math.Float64frombits(0x7FF8000000000123)
	if Digest(b3) != want {
		t.Fatal("a NaN with another payload changed the digest")
	}
}

func TestCheckDigest(t *testing.T) {
	raw, err := os.ReadFile("testdata/digest-small.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, old, new string
		want           string // "" ok; "none": ErrNoDigest; else in the error
	}{
		{"as written", "", "", ""},
		{"one digit of a record", `"objective":0.5,`, `"objective":0.6,`, "digest mismatch"},
		{"a record's time", `"time_s":0.0005`, `"time_s":0.0006`, "digest mismatch"},
		{"a summary's status", `"status":"max_iters","message"`, `"status":"converged","message"`, "digest mismatch"},
		{"a record removed", `,
 {"k":3,"passes":3,"time_s":0.001,"step":"away","gamma":"-Inf","batch":1,"active":1,"objective":0.125,"gap":-0}`, ``, "digest mismatch"},
		{"no digest", `,
 "digest":"` + Digest(readSmall(t)) + `"`, ``, "none"},
		{"the name changed", `"version":"test",`, `"version":"test","name":"renamed",`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := string(raw)
			if c.old != "" {
				if !strings.Contains(doc, c.old) {
					t.Fatalf("the test's edit %q finds nothing", c.old)
				}
				doc = strings.Replace(doc, c.old, c.new, 1)
			}
			b, err := Decode(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			err = CheckDigest(b)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("CheckDigest: %v, want nil", err)
			case c.want == "none" && !errors.Is(err, ErrNoDigest):
				t.Fatalf("CheckDigest: %v, want ErrNoDigest", err)
			case c.want != "" && c.want != "none" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("CheckDigest: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestDecodeRefusesMalformedDigest(t *testing.T) {
	raw, _ := os.ReadFile("testdata/digest-small.json")
	for _, bad := range []string{`"sha256:abc"`, `"md5:` + strings.Repeat("0", 64) + `"`, `"sha256:` + strings.Repeat("A", 64) + `"`, `12`} {
		doc := strings.Replace(string(raw), `"`+Digest(readSmall(t))+`"`, bad, 1)
		_, err := Decode(strings.NewReader(doc))
		var be *Error
		if !errors.As(err, &be) || be.Path != "digest" {
			t.Errorf("digest %s: got %v, want an error at digest", bad, err)
		}
	}
}

// mutation is one change of one field of the small bundle.
type mutation struct {
	name string
	fn   func(b *Bundle)
}

// mutations lists a change of every field the digest covers, in every
// record and trace of b (the changes are applied to a fresh copy each).
func mutations(b *Bundle) []mutation {
	var ms []mutation
	add := func(name string, fn func(b *Bundle)) { ms = append(ms, mutation{name, fn}) }
	nudge := func(v float64) float64 {
		if math.IsNaN(v) {
			return 0
		}
		if math.IsInf(v, 0) {
			return math.MaxFloat64
		}
		return math.Nextafter(v, math.Inf(1))
	}
	nudgeOpt := func(p **float64) {
		if *p == nil {
			*p = solver.F(0)
		} else {
			v := nudge(**p)
			*p = &v
		}
	}
	for ti := range b.Traces {
		add("algo", func(b *Bundle) { b.Traces[ti].Algo += "x" })
		add("replication", func(b *Bundle) { b.Traces[ti].Replication++ })
		add("seed", func(b *Bundle) { b.Traces[ti].Seed++ })
		add("summary presence", func(b *Bundle) {
			if b.Traces[ti].Summary == nil {
				b.Traces[ti].Summary = &solver.Summary{}
			} else {
				b.Traces[ti].Summary = nil
			}
		})
		if b.Traces[ti].Summary != nil {
			for _, f := range []struct {
				name string
				fn   func(s *solver.Summary)
			}{
				{"objective", func(s *solver.Summary) { s.Objective = nudge(s.Objective) }},
				{"gap", func(s *solver.Summary) { s.Gap = nudge(s.Gap) }},
				{"iters", func(s *solver.Summary) { s.Iters++ }},
				{"passes", func(s *solver.Summary) { s.Passes = nudge(s.Passes) }},
				{"time_s", func(s *solver.Summary) { s.Time = nudge(s.Time) }},
				{"status", func(s *solver.Summary) { s.Status += "x" }},
				{"message", func(s *solver.Summary) { s.Message += "x" }},
				// the boundary between two strings moves
				{"status/message boundary", func(s *solver.Summary) { s.Status, s.Message = s.Status+s.Message[:1], s.Message[1:] }},
			} {
				add("summary."+f.name, func(b *Bundle) {
					s := *b.Traces[ti].Summary
					f.fn(&s)
					b.Traces[ti].Summary = &s
				})
			}
		}
		add("a record added", func(b *Bundle) {
			b.Traces[ti].Records = append(b.Traces[ti].Records, solver.Record{K: 99, Step: "none"})
		})
		for ri := range b.Traces[ti].Records {
			rec := func(b *Bundle) *solver.Record { return &b.Traces[ti].Records[ri] }
			for _, f := range []struct {
				name string
				fn   func(r *solver.Record)
			}{
				{"k", func(r *solver.Record) { r.K++ }},
				{"passes", func(r *solver.Record) { r.Passes = nudge(r.Passes) }},
				{"time_s", func(r *solver.Record) { r.Time = nudge(r.Time) }},
				{"step", func(r *solver.Record) { r.Step += "x" }},
				{"gamma", func(r *solver.Record) { r.Gamma = nudge(r.Gamma) }},
				{"batch", func(r *solver.Record) { r.Batch++ }},
				{"active", func(r *solver.Record) { r.Active++ }},
				{"fw_steps", func(r *solver.Record) { r.FWSteps++ }},
				{"away_steps", func(r *solver.Record) { r.AwaySteps++ }},
				{"drops", func(r *solver.Record) { r.Drops++ }},
				{"cleanups", func(r *solver.Record) { r.Cleanups++ }},
				{"objective", func(r *solver.Record) { nudgeOpt(&r.Objective) }},
				{"gap", func(r *solver.Record) { nudgeOpt(&r.Gap) }},
				{"grad_err", func(r *solver.Record) { nudgeOpt(&r.GradErr) }},
				{"objective to null", func(r *solver.Record) {
					if r.Objective != nil {
						r.Objective = nil
					} else {
						r.Objective = solver.F(math.NaN())
					}
				}},
				{"extra added", func(r *solver.Record) { r.Extra = withExtra(r.Extra, "new", 0) }},
				{"negative zero", func(r *solver.Record) {
					if math.Float64bits(r.Gamma) == 0 {
						r.Gamma = math.Copysign(0, -1)
					} else {
						r.Gamma = 0
					}
				}},
			} {
				add("record "+f.name, func(b *Bundle) { f.fn(rec(b)) })
			}
			for k, v := range b.Traces[ti].Records[ri].Extra {
				add("extra "+k, func(b *Bundle) { r := rec(b); r.Extra = withExtra(r.Extra, k, nudge(v)) })
				add("extra "+k+" removed", func(b *Bundle) {
					r := rec(b)
					r.Extra = withExtra(r.Extra, "", 0)
					delete(r.Extra, k)
				})
				add("extra "+k+" renamed", func(b *Bundle) {
					r := rec(b)
					r.Extra = withExtra(r.Extra, k+"x", v)
					delete(r.Extra, k)
				})
			}
		}
	}
	add("a trace removed", func(b *Bundle) { b.Traces = b.Traces[:len(b.Traces)-1] })
	add("traces swapped", func(b *Bundle) { b.Traces[0], b.Traces[1] = b.Traces[1], b.Traces[0] })
	add("records moved to the next trace", func(b *Bundle) {
		t0 := &b.Traces[0]
		b.Traces[1].Records = append([]solver.Record{t0.Records[len(t0.Records)-1]}, b.Traces[1].Records...)
		t0.Records = t0.Records[:len(t0.Records)-1]
	})
	return ms
}

// withExtra copies m with key set to v ("" sets nothing).
func withExtra(m map[string]float64, key string, v float64) map[string]float64 {
	out := map[string]float64{}
	for k, x := range m {
		out[k] = x
	}
	if key != "" {
		out[key] = v
	}
	return out
}

// clone deep-copies b's traces.
func clone(b *Bundle) *Bundle {
	c := *b
	c.Traces = make([]Trace, len(b.Traces))
	for i, t := range b.Traces {
		t.Records = append([]solver.Record(nil), t.Records...)
		for j := range t.Records {
			t.Records[j].Extra = withExtra(t.Records[j].Extra, "", 0)
			if len(b.Traces[i].Records[j].Extra) == 0 {
				t.Records[j].Extra = nil
			}
		}
		if t.Summary != nil {
			s := *t.Summary
			t.Summary = &s
		}
		c.Traces[i] = t
	}
	return &c
}

// Every single change of a field the digest covers changes the digest.
func TestDigestChangesWithEveryField(t *testing.T) {
	b := readSmall(t)
	want := Digest(b)
	ms := mutations(b)
	if len(ms) < 80 {
		t.Fatalf("only %d mutations", len(ms))
	}
	for _, m := range ms {
		c := clone(b)
		m.fn(c)
		if Digest(c) == want {
			t.Errorf("%s: the digest did not change", m.name)
		}
		if Digest(b) != want {
			t.Fatalf("%s: the mutation changed the original", m.name)
		}
	}
}

// FuzzDigestRecordField sets one field of one record to an arbitrary value:
// the digest changes exactly when the value does (NaNs are one value).
func FuzzDigestRecordField(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint64(0))
	f.Add(uint8(2), uint8(4), math.Float64bits(0.1))
	f.Add(uint8(1), uint8(11), uint64(0x7FF8000000000001))
	f.Add(uint8(3), uint8(12), uint64(1<<63))
	b := readSmall(f)
	want := Digest(b)
	recs := b.Traces[0].Records
	f.Fuzz(func(t *testing.T, ri, field uint8, bits uint64) {
		c := clone(b)
		r := &c.Traces[0].Records[int(ri)%len(recs)]
		v := math.Float64frombits(bits)
		same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b) }
		changed := false
		setF := func(p *float64) { changed = !same(*p, v); *p = v }
		setI := func(p *int) { n := int(bits >> 1); changed = *p != n; *p = n }
		setO := func(p **float64) {
			if bits&1 == 0 && bits>>1 == 0 {
				changed = *p != nil
				*p = nil
				return
			}
			changed = *p == nil || !same(**p, v)
			*p = &v
		}
		switch field % 14 {
		case 0:
			setI(&r.K)
		case 1:
			setF(&r.Passes)
		case 2:
			setF(&r.Time)
		case 3:
			setF(&r.Gamma)
		case 4:
			setI(&r.Batch)
		case 5:
			setI(&r.Active)
		case 6:
			setI(&r.FWSteps)
		case 7:
			setI(&r.AwaySteps)
		case 8:
			setI(&r.Drops)
		case 9:
			setI(&r.Cleanups)
		case 10:
			setO(&r.Objective)
		case 11:
			setO(&r.Gap)
		case 12:
			setO(&r.GradErr)
		case 13:
			s := string(rune('a' + bits%26))
			changed = r.Step != s
			r.Step = s
		}
		if got := Digest(c) != want; got != changed {
			t.Fatalf("record %d field %d set from bits %#x: digest changed %v, value changed %v", int(ri)%len(recs), field%14, bits, got, changed)
		}
	})
}

// BenchmarkDigest: the digest of a trace of 100 000 LASSO-like records
// (objective, gap and sampled-gradient error on every tenth), the cost
// Encode adds to every bundle it writes.
func BenchmarkDigest(b *testing.B) {
	recs := make([]solver.Record, 100_000)
	for i := range recs {
		r := &recs[i]
		*r = solver.Record{K: i, Passes: float64(i) * 0.37, Time: float64(i) * 1e-6, Step: "fw", Gamma: 1 / float64(i+2), Batch: 100, Active: 12}
		if i%10 == 0 {
			r.Objective, r.Gap, r.GradErr = solver.F(1/float64(i+1)), solver.F(2/float64(i+1)), solver.F(0.1)
		}
	}
	bd := &Bundle{Traces: []Trace{{Algo: "ssfw-as", Records: recs}}, Spec: spec.Run{Problem: "lasso"}}
	b.Run("digest", func(b *testing.B) {
		for b.Loop() {
			Digest(bd)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/record")
	})
	// the whole of Encode, digest included, for scale
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if err := Encode(io.Discard, bd); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/record")
	})
}

// A trace's status is covered: one that says otherwise than its summary
// (a finished trace marked cancelled, which verify would compare as a
// prefix only), or a status given to a trace without a summary, changes
// the digest, and CheckDigest refuses the bundle; a status equal to its
// summary's leaves the golden digest as it was. testdata/digest.py, the
// independent implementation, encodes it the same way.
func TestDigestCoversTraceStatus(t *testing.T) {
	b := readSmall(t)
	want := Digest(b)
	if b.Traces[0].Summary == nil || b.Traces[0].Status != b.Traces[0].Summary.Status {
		t.Fatalf("the golden bundle's first trace: status %q, summary %+v", b.Traces[0].Status, b.Traces[0].Summary)
	}
	same := clone(b)
	same.Traces[0].Status = ""
	if Digest(same) != want {
		t.Error("a status left to the summary changed the digest")
	}
	for _, st := range []string{"cancelled", "interrupted", "converged"} {
		c := clone(b)
		c.Traces[0].Status = st
		if st == c.Traces[0].Summary.Status {
			continue
		}
		if Digest(c) == want {
			t.Errorf("trace status %s over a summary saying %s: the digest did not change", st, c.Traces[0].Summary.Status)
		}
		if err := CheckDigest(c); err == nil {
			t.Errorf("trace status %s: CheckDigest accepted the bundle", st)
		}
	}
	none := clone(b)
	none.Traces[0].Summary = nil
	a := Digest(none)
	none.Traces[0].Status = "interrupted"
	if Digest(none) == a {
		t.Error("the status of a trace without a summary is not covered")
	}
}
