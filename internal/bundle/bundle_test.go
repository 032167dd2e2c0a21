package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

func randFloat(rng *rand.Rand) float64 {
	switch rng.IntN(10) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Copysign(0, -1)
	case 4:
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7ff))<<52) // any finite
	case 5:
		return math.SmallestNonzeroFloat64
	}
	return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
}

// testBundle returns a valid bundle with random records (non-finite values
// included).
func testBundle(rng *rand.Rand, records int) *Bundle {
	b := &Bundle{
		Version: "v1.2.3 abcdef",
		Status:  "done",
		Created: time.Date(2026, 2, 3, 4, 5, 6, 7000, time.UTC),
		Ended:   time.Date(2026, 2, 3, 4, 6, 0, 0, time.UTC),
		Name:    "a \"quoted\" <name>",
		Note:    "ρ = 0.1\nsecond line",
		Spec: spec.Run{Problem: "lasso", Params: spec.Params{"lambda": "2"}, Replications: 2, Seed: 5, Iters: 100_000,
			Algorithms: []spec.Algo{{Algo: "ssfw-as", Rho: 0.2}, {Algo: "fista"}}},
		Info: Info{Dim: 50, Samples: 200, Blocks: 1, FStar: solver.F(1.25), Panels: json.RawMessage(`{"beta_true":[1,0,-2.5]}`)},
	}
	for a, algo := range []string{"ssfw-as", "fista"} {
		for rep := 0; rep < 2; rep++ {
			t := Trace{Algo: algo, Replication: rep, Seed: 5 + int64(rep), Status: solver.StatusMaxIters,
				Summary: &solver.Summary{Objective: randFloat(rng), Gap: randFloat(rng), Iters: 99, Passes: 3.5, Time: 0.01, Status: solver.StatusMaxIters, Message: "limit"}}
			if a == 1 && rep == 1 {
				t.Panels = json.RawMessage(`{"beta":[0.5,0,-2]}`)
				t.Status = ""
			}
			k := 0
			for i := 0; i < records; i++ {
				r := solver.Record{K: k, Passes: randFloat(rng), Time: randFloat(rng), Step: []string{"fw", "away", "drop", "none"}[rng.IntN(4)],
					Gamma: randFloat(rng), Batch: rng.IntN(300), Active: rng.IntN(50)}
				k += 1 + rng.IntN(3)
				if rng.IntN(3) == 0 {
					r.FWSteps, r.AwaySteps, r.Drops, r.Cleanups = rng.IntN(3), rng.IntN(3), rng.IntN(2), rng.IntN(2)
				}
				if rng.IntN(2) == 0 {
					r.Objective, r.Gap = solver.F(randFloat(rng)), solver.F(randFloat(rng))
					if rng.IntN(2) == 0 {
						r.GradErr = solver.F(randFloat(rng))
					}
					if rng.IntN(2) == 0 {
						r.Extra = map[string]float64{"nnz": float64(rng.IntN(50)), "t_slack": randFloat(rng), "w:v\"2": 1}
					}
				}
				t.Records = append(t.Records, r)
			}
			b.Traces = append(b.Traces, t)
		}
	}
	return b
}

func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

func sameOpt(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return sameFloat(*a, *b)
}

func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y bytes.Buffer
	json.Compact(&x, a)
	json.Compact(&y, b)
	return x.String() == y.String()
}

// bundleDiff describes the first difference between two bundles ("" if
// none); floats compare bit for bit (any NaN equals any NaN).
func bundleDiff(a, b *Bundle) string {
	switch {
	case a.Version != b.Version || a.Status != b.Status || a.Name != b.Name || a.Note != b.Note:
		return fmt.Sprintf("header %q %q %q %q vs %q %q %q %q", a.Version, a.Status, a.Name, a.Note, b.Version, b.Status, b.Name, b.Note)
	case !a.Created.Equal(b.Created) || !a.Ended.Equal(b.Ended):
		return fmt.Sprintf("times %v %v vs %v %v", a.Created, a.Ended, b.Created, b.Ended)
	case !reflect.DeepEqual(a.Spec, b.Spec):
		return fmt.Sprintf("spec %+v vs %+v", a.Spec, b.Spec)
	case a.Info.Dim != b.Info.Dim || a.Info.Samples != b.Info.Samples || a.Info.Blocks != b.Info.Blocks || !sameOpt(a.Info.FStar, b.Info.FStar) || !sameJSON(a.Info.Panels, b.Info.Panels):
		return fmt.Sprintf("info %+v vs %+v", a.Info, b.Info)
	case len(a.Traces) != len(b.Traces):
		return fmt.Sprintf("%d traces vs %d", len(a.Traces), len(b.Traces))
	}
	for i := range a.Traces {
		s, t := &a.Traces[i], &b.Traces[i]
		if s.Algo != t.Algo || s.Replication != t.Replication || s.Seed != t.Seed || s.Status != t.Status || s.PanelsError != t.PanelsError || !sameJSON(s.Panels, t.Panels) {
			return fmt.Sprintf("trace %d: %s/%d/%d/%q vs %s/%d/%d/%q", i, s.Algo, s.Replication, s.Seed, s.Status, t.Algo, t.Replication, t.Seed, t.Status)
		}
		if (s.Summary == nil) != (t.Summary == nil) {
			return fmt.Sprintf("trace %d: summary %v vs %v", i, s.Summary, t.Summary)
		}
		if s.Summary != nil {
			x, y := *s.Summary, *t.Summary
			if !sameFloat(x.Objective, y.Objective) || !sameFloat(x.Gap, y.Gap) || !sameFloat(x.Passes, y.Passes) || !sameFloat(x.Time, y.Time) ||
				x.Iters != y.Iters || x.Status != y.Status || x.Message != y.Message {
				return fmt.Sprintf("trace %d: summary %+v vs %+v", i, x, y)
			}
		}
		if len(s.Records) != len(t.Records) {
			return fmt.Sprintf("trace %d: %d records vs %d", i, len(s.Records), len(t.Records))
		}
		for j := range s.Records {
			p, q := &s.Records[j], &t.Records[j]
			if p.K != q.K || !sameFloat(p.Passes, q.Passes) || !sameFloat(p.Time, q.Time) || !sameFloat(p.Gamma, q.Gamma) || p.Step != q.Step ||
				p.Batch != q.Batch || p.Active != q.Active || p.FWSteps != q.FWSteps || p.AwaySteps != q.AwaySteps || p.Drops != q.Drops || p.Cleanups != q.Cleanups ||
				!sameOpt(p.Objective, q.Objective) || !sameOpt(p.Gap, q.Gap) || !sameOpt(p.GradErr, q.GradErr) || len(p.Extra) != len(q.Extra) {
				return fmt.Sprintf("trace %d record %d: %+v vs %+v", i, j, *p, *q)
			}
			for k, v := range p.Extra {
				if w, ok := q.Extra[k]; !ok || !sameFloat(v, w) {
					return fmt.Sprintf("trace %d record %d extra %q: %v vs %v", i, j, k, v, w)
				}
			}
		}
	}
	if !sameJSON(a.Aggregates, b.Aggregates) {
		return "aggregates differ"
	}
	return ""
}

func encodeT(t testing.TB, b *Bundle) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 50, 3000} {
		b := testBundle(rng, n)
		b.Aggregates = json.RawMessage(`[{"algo": "ssfw-as", "objective": [1, 2]}]`)
		data := encodeT(t, b)
		got, err := Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%d records: %v", n, err)
		}
		if d := bundleDiff(b, got); d != "" {
			t.Fatalf("%d records: %s", n, d)
		}
		// the encoding is canonical
		if again := encodeT(t, got); !bytes.Equal(again, data) {
			t.Fatalf("%d records: re-encoding differs", n)
		}
		if !json.Valid(data) {
			t.Fatalf("not valid JSON")
		}
	}
}

// Tools that rewrite JSON with sorted keys (jq -S, Python's sort_keys)
// keep a bundle readable.
func TestFieldOrderIsFree(t *testing.T) {
	b := testBundle(rand.New(rand.NewPCG(15, 16)), 20)
	var doc map[string]any
	if err := json.Unmarshal(encodeT(t, b), &doc); err != nil {
		t.Fatal(err)
	}
	sorted, err := json.Marshal(doc) // map keys sorted, at every level
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(sorted, []byte(`{"created":`)) {
		t.Fatalf("not reordered: %.40s", sorted)
	}
	got, err := Decode(bytes.NewReader(sorted))
	if err != nil {
		t.Fatal(err)
	}
	if d := bundleDiff(b, got); d != "" {
		t.Fatal(d)
	}
}

func TestRecordsMatchSolverJSON(t *testing.T) {
	// finite records read back from encoding/json's own encoding of
	// solver.Record: the bundle's records are that format
	rng := rand.New(rand.NewPCG(3, 4))
	b := testBundle(rng, 200)
	for i := range b.Traces {
		for j := range b.Traces[i].Records {
			r := &b.Traces[i].Records[j]
			r.Passes, r.Time, r.Gamma = rng.Float64(), rng.Float64(), rng.Float64()
			for _, p := range []*float64{r.Objective, r.Gap, r.GradErr} {
				if p != nil {
					*p = rng.NormFloat64()
				}
			}
			for k := range r.Extra {
				r.Extra[k] = rng.NormFloat64()
			}
		}
	}
	var e encoder
	for _, r := range b.Traces[0].Records {
		e.buf = e.buf[:0]
		e.record(&r)
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.buf) != string(want) {
			t.Fatalf("record encodes as\n%s\nencoding/json:\n%s", e.buf, want)
		}
	}
}

func TestStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	b := testBundle(rng, 700)
	id, err := Put(ctx, st, b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromStore(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	// a trace without a status of its own takes its summary's
	want := *b
	want.Traces = append([]Trace(nil), b.Traces...)
	want.Traces[3].Status = want.Traces[3].Summary.Status
	if d := bundleDiff(&want, got); d != "" {
		t.Fatal(d)
	}
	// streamed from the store, it is the same document
	var streamed bytes.Buffer
	if err := WriteStored(ctx, &streamed, st, id); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), encodeT(t, got)) {
		t.Error("WriteStored and Encode(FromStore) differ")
	}
	// and the bundle of a stored run encodes, decodes and stores again alike
	again, err := Decode(bytes.NewReader(encodeT(t, got)))
	if err != nil {
		t.Fatal(err)
	}
	id2, err := Put(ctx, st, again)
	if err != nil {
		t.Fatal(err)
	}
	if id2 == id {
		t.Fatal("a second import reused the id")
	}
	got2, _ := FromStore(ctx, st, id2)
	if d := bundleDiff(got, got2); d != "" {
		t.Fatal(d)
	}
}

func TestPutFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := testBundle(rand.New(rand.NewPCG(7, 8)), 10)
	b.Traces[2].Panels = json.RawMessage(`{"broken"`) // Decode never gives this
	if _, err := Put(ctx, st, b); err == nil {
		t.Fatal("stored panels that are not JSON")
	}
	if _, total, _ := st.List(ctx, store.Filter{}); total != 0 {
		t.Fatalf("%d runs left after a failed import", total)
	}
}

// validDoc is a small valid bundle as text, for the error cases.
func validDoc(t *testing.T) string {
	b := testBundle(rand.New(rand.NewPCG(9, 10)), 4)
	for i := range b.Traces {
		for j := range b.Traces[i].Records {
			r := &b.Traces[i].Records[j]
			r.K = j
			r.Passes, r.Time, r.Gamma, r.Extra = 1, 2, 0.5, nil
		}
	}
	return string(encodeT(t, b))
}

func TestDecodeErrorsNameTheField(t *testing.T) {
	doc := validDoc(t)
	if _, err := Decode(strings.NewReader(doc)); err != nil {
		t.Fatalf("the valid document: %v", err)
	}
	// rec replaces the n-th occurrence (0-based) of old in the document
	rep := func(old, new string, n int) string {
		i := -1
		for ; n >= 0; n-- {
			j := strings.Index(doc[i+1:], old)
			if j < 0 {
				t.Fatalf("%q not in the document", old)
			}
			i += 1 + j
		}
		return doc[:i] + new + doc[i+len(old):]
	}
	for _, c := range []struct {
		name, doc, path, msg string
	}{
		{"not an object", `[1]`, "", "must be an object"},
		{"empty", ``, "", "ends early"},
		{"other format", rep(`"fwlab-bundle"`, `"other"`, 0), "format", `must be "fwlab-bundle"`},
		{"no format", `{"version":"x"}`, "format", "is required: this is not a fwlab bundle"},
		{"newer format version", rep(fmt.Sprintf(`"format_version":%d`, FormatVersion), fmt.Sprintf(`"format_version":%d`, FormatVersion+1), 0), "format_version", "newer fwlab"},
		{"unknown field", rep(`"version":`, `"colour":1,"version":`, 0), "colour", "unknown field"},
		{"missing version", rep(`"version":"v1.2.3 abcdef",`, ``, 0), "version", "is required"},
		{"duplicate field", rep(`"version":`, `"name":"x","version":`, 0), "name", "appears twice"},
		{"bad status", rep(`"status":"done"`, `"status":"finished"`, 0), "status", "must be one of"},
		{"bad created", rep(`"created":"2026-02-03T04:05:06.000007Z"`, `"created":"yesterday"`, 0), "created", "RFC 3339"},
		{"spec unknown field", rep(`"problem":"lasso"`, `"problem":"lasso","colour":1`, 0), "spec.colour", "unknown field"},
		{"spec wrong type", rep(`"seed":5`, `"seed":"five"`, 0), "spec.seed", "must be an integer"},
		{"spec invalid", rep(`"replications":2`, `"replications":-1`, 0), "spec.replications", "must be between"},
		{"spec unknown algorithm", rep(`"algo":"fista"`, `"algo":"newton"`, 0), "spec.algorithms[1].algo", ""},
		{"info dim type", rep(`"dim":50`, `"dim":"50"`, 0), "info.dim", "must be an integer"},
		{"info dim missing", rep(`"dim":50,`, ``, 0), "info.dim", "is required"},
		{"info unknown", rep(`"blocks":1`, `"blocks":1,"rank":3`, 0), "info.rank", "unknown field"},
		{"trace unknown", rep(`"seed":6`, `"seed":6,"x":1`, 0), "traces[1].x", "unknown field"},
		{"trace algo not in spec", rep(`"algo":"fista","replication":0`, `"algo":"afw","replication":0`, 0), "traces[2].algo", "spec's algorithms"},
		{"trace replication out of range", rep(`"replication":1`, `"replication":2`, 0), "traces[1].replication", "between 0 and 1"},
		{"trace missing records", rep(`,"records":[`, `,"recs":[`, 2), "traces[2].recs", "unknown field"},
		{"summary missing status", rep(`,"status":"max_iters","message"`, `,"message"`, 1), "traces[1].summary.status", "is required"},
		{"summary bad number", rep(`"passes":3.5`, `"passes":true`, 0), "traces[0].summary.passes", "must be a number"},
		{"record unknown field", rep(`{"k":2,`, `{"k":2,"kk":1,`, 0), "traces[0].records[2].kk", "unknown field"},
		{"record k not increasing", rep(`{"k":2,`, `{"k":1,`, 0), "traces[0].records[2].k", "greater than the previous record's k (1)"},
		{"record k beyond iters", rep(`{"k":3,`, `{"k":100001,`, 1), "traces[1].records[3].k", "at most the spec's iters"},
		{"record negative batch", regexp.MustCompile(`"batch":\d+`).ReplaceAllString(doc, `"batch":-1`), "traces[0].records[0].batch", "non-negative"},
		{"record gamma null", rep(`"gamma":0.5`, `"gamma":null`, 5), "traces[1].records[1].gamma", `must be a number, "NaN"`},
		{"record missing step", rep(`"step":`, `"x":`, 0), "traces[0].records[0].step", "is required"},
		{"record not an object", rep(`{"k":1,`, `[{"k":1,`, 0), "traces[0].records[1]", ""},
		{"record bad extra", rep(`"active":`, `"extra":{"a":"b"},"active":`, 0), "traces[0].records[0].extra.a", "must be a number"},
		{"trailing data", doc + `{}`, "", "after the bundle"},
		{"truncated in a record", doc[:strings.Index(doc, `{"k":2,`)+10], "traces[0].records[2]", "ends early"},
		{"truncated between records", doc[:strings.Index(doc, `{"k":2,`)], "traces[0].records[2]", "ends early"},
		{"truncated in the header", doc[:30], "", "ends early (truncated?) (after the field format)"},
		{"invalid JSON", rep(`{"k":2,`, `{"k":2,,`, 0), "traces[0].records[2]", "invalid JSON"},
	} {
		_, err := Decode(strings.NewReader(c.doc))
		var be *Error
		if !errors.As(err, &be) {
			t.Errorf("%s: error %v, want a bundle.Error", c.name, err)
			continue
		}
		if be.Path != c.path || !strings.Contains(be.Msg, c.msg) {
			t.Errorf("%s: error at %q: %q; want at %q containing %q", c.name, be.Path, be.Msg, c.path, c.msg)
		}
	}
}

func TestEveryTruncationIsRefused(t *testing.T) {
	doc := validDoc(t)
	trimmed := strings.TrimRight(doc, "\n")
	for i := 0; i < len(trimmed); i++ {
		_, err := Decode(strings.NewReader(doc[:i]))
		if err == nil {
			t.Fatalf("a document cut after %d of %d bytes decoded", i, len(doc))
		}
		var be *Error
		if !errors.As(err, &be) {
			t.Fatalf("cut after %d bytes: %v is not a bundle.Error", i, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 2, 5} {
		var buf bytes.Buffer
		Encode(&buf, testBundle(rng, n))
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"format":"fwlab-bundle","format_version":1,"version":"x","spec":{"problem":"lasso","algorithms":[{"algo":"afw"}]},"info":{"dim":1,"samples":1,"blocks":1},"traces":[]}`))
	// laid out otherwise: indented, sorted keys (the records' scanner hands
	// back to the JSON decoder after each trace's records)
	var buf bytes.Buffer
	Encode(&buf, testBundle(rng, 3))
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		f.Fatal(err)
	}
	indented, _ := json.MarshalIndent(m, "", " ")
	f.Add(indented)
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(bytes.NewReader(data))
		if err != nil {
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("error %v is not a bundle.Error", err)
			}
			return
		}
		// what decodes encodes, and decodes again to the same
		var buf bytes.Buffer
		if err := Encode(&buf, b); err != nil {
			t.Fatalf("encoding a decoded bundle: %v", err)
		}
		again, err := Decode(&buf)
		if err != nil {
			t.Fatalf("decoding a re-encoded bundle: %v", err)
		}
		if d := bundleDiff(b, again); d != "" {
			t.Fatal(d)
		}
	})
}

// A failure of the reader stays visible behind the bundle.Error (a server
// tells a body over its size limit from a malformed one).
func TestReaderFailureIsWrapped(t *testing.T) {
	doc := validDoc(t)
	errLimit := errors.New("body too large")
	_, err := Decode(io.MultiReader(strings.NewReader(doc[:len(doc)/2]), iotest.ErrReader(errLimit)))
	var be *Error
	if !errors.Is(err, errLimit) || !errors.As(err, &be) || !strings.HasPrefix(be.Path, "traces[") {
		t.Fatalf("error %v (path %q)", err, be.Path)
	}
}

func TestPutLiveBundleIsInterrupted(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := testBundle(rand.New(rand.NewPCG(13, 14)), 5)
	b.Status = store.StatusRunning
	b.Traces[0].Status = store.StatusRunning
	b.Traces[1].Status, b.Traces[1].Summary = "", nil
	id, err := Put(ctx, st, b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusInterrupted || r.Traces[0].Status != store.StatusInterrupted || r.Traces[1].Status != store.StatusInterrupted ||
		r.Traces[2].Status != solver.StatusMaxIters {
		t.Errorf("statuses %s: %s %s %s", r.Status, r.Traces[0].Status, r.Traces[1].Status, r.Traces[2].Status)
	}
}

// appendString writes every string as encoding/json does: plain ones
// directly, the others (quotes, backslashes, HTML's <, > and &, control
// characters, non-ASCII, invalid UTF-8, U+2028) by encoding/json.
func TestAppendStringIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "Z", "0", " ", "_", "-", "\"", "\\", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "/", "'", "fw"}
	for i := 0; i < 20_000; i++ {
		var sb strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: appendString %s, encoding/json %s", s, got[1:], want)
		}
	}
}
