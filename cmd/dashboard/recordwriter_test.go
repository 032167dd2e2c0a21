package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// referenceWrite is what solve wrote per record through encoding/json and
// encoding/csv: the independent reference of the hand-written encoders.
func referenceWrite(t *testing.T, w *bytes.Buffer, cw *csv.Writer, format string, tagged, header bool, algo string, rep int, r solver.Record) {
	switch format {
	case "jsonl":
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if tagged {
			fmt.Fprintf(w, "{\"algo\":%q,\"replication\":%d,", algo, rep)
			w.Write(b[1:])
			w.WriteByte('\n')
		} else {
			w.Write(b)
			w.WriteByte('\n')
		}
	case "csv":
		if header {
			h := csvHeader
			if tagged {
				h = append([]string{"algo", "replication"}, h...)
			}
			cw.Write(h)
		}
		opt := func(p *float64) string {
			if p == nil {
				return ""
			}
			return strconv.FormatFloat(*p, 'g', -1, 64)
		}
		extra := ""
		if len(r.Extra) > 0 {
			m := map[string]any{}
			for k, v := range r.Extra {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					m[k] = nil
				} else {
					m[k] = v
				}
			}
			b, _ := json.Marshal(m)
			extra = string(b)
		}
		row := []string{strconv.Itoa(r.K), strconv.FormatFloat(r.Passes, 'g', -1, 64), strconv.FormatFloat(r.Time, 'g', -1, 64),
			r.Step, strconv.FormatFloat(r.Gamma, 'g', -1, 64), strconv.Itoa(r.Batch), strconv.Itoa(r.Active),
			strconv.Itoa(r.FWSteps), strconv.Itoa(r.AwaySteps), strconv.Itoa(r.Drops), strconv.Itoa(r.Cleanups),
			opt(r.Objective), opt(r.Gap), opt(r.GradErr), extra}
		if tagged {
			row = append([]string{algo, strconv.Itoa(rep)}, row...)
		}
		cw.Write(row)
		cw.Flush()
	}
}

// The JSON Lines and CSV solve writes are those of encoding/json and
// encoding/csv, byte for byte, on records with every kind of value and
// labels that need quoting.
func TestRecordWriterBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []float64{0, math.Copysign(0, -1), 1, 0.1, 1e-7, 1e21, 5e-324, math.NaN(), math.Inf(1), math.Inf(-1), 1.0 / 3, -123.5}
	pick := func() float64 {
		if rng.IntN(3) == 0 {
			return vals[rng.IntN(len(vals))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
	}
	ptr := func() *float64 {
		if rng.IntN(4) == 0 {
			return nil
		}
		return solver.F(pick())
	}
	algos := []string{"afw", "ssfw-as + slack collapse", " lead", `q"uote`, "a,b", "é<&>", `\.`, "line\nbreak"}
	keys := []string{"nnz", "x0", "a<b", "q\"k", "é", "kkt"}
	steps := []string{"fw", "away", "sweep", "full-collapse", "a,b", " x"}
	for _, format := range []string{"jsonl", "csv"} {
		for _, tagged := range []bool{false, true} {
			var got, want bytes.Buffer
			bw := bufio.NewWriter(&got)
			rw := newRecordWriter(bw, format, tagged)
			cw := csv.NewWriter(&want)
			for i := 0; i < 3000; i++ {
				r := solver.Record{K: i, Passes: pick(), Time: pick(), Step: steps[rng.IntN(len(steps))], Gamma: pick(),
					Batch: rng.IntN(100), Active: rng.IntN(9), FWSteps: rng.IntN(2), AwaySteps: rng.IntN(2), Drops: rng.IntN(2), Cleanups: rng.IntN(2),
					Objective: ptr(), Gap: ptr(), GradErr: ptr()}
				if rng.IntN(3) == 0 {
					r.Extra = map[string]float64{}
					for n := rng.IntN(4); n > 0; n-- {
						r.Extra[keys[rng.IntN(len(keys))]] = pick()
					}
				}
				algo, rep := algos[rng.IntN(len(algos))], rng.IntN(3)
				rw.write(algo, rep, r)
				referenceWrite(t, &want, cw, format, tagged, i == 0, algo, rep, r)
			}
			rw.flush()
			bw.Flush()
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				g, w := got.Bytes(), want.Bytes()
				i := 0
				for i < len(g) && i < len(w) && g[i] == w[i] {
					i++
				}
				lo := max(0, i-200)
				t.Fatalf("%s tagged=%v differs at byte %d:\n got %q\nwant %q", format, tagged, i, g[lo:min(len(g), i+100)], w[lo:min(len(w), i+100)])
			}
		}
	}
}

// The writer holds records and encodes them in groups: each trace's
// records still come whole and in order, before its summary and before the
// lines after them (the aggregates), whatever their number against the
// group's size; the records keep the values they had when written.
func TestRecordWriterHoldsInOrder(t *testing.T) {
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	rw := newRecordWriter(bw, "jsonl", true)
	counts := []int{1, heldRecords - 1, heldRecords, heldRecords + 1, 3*heldRecords + 7}
	for i, n := range counts {
		algo := fmt.Sprintf("algo%d", i)
		obj, gap := 0.0, 0.0 // one variable for every record, as a method may
		for k := range n {
			obj, gap = float64(k), float64(k)
			r := solver.Record{K: k, Objective: &obj}
			if k%3 == 0 {
				r.Gap = &gap
			}
			if k%50 == 7 {
				r.Extra = map[string]float64{"v": float64(k)}
			}
			rw.write(algo, i, r)
			if r.Extra != nil {
				r.Extra["v"] = -1 // a caller's later change is not written
			}
		}
		rw.summary(algo, i, 1, solver.Summary{Iters: n}, nil)
	}
	rw.line(map[string]any{"aggregate": "end"})
	if err := rw.flush(); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	at := 0
	for i, n := range counts {
		for k := range n {
			var r struct {
				Algo      string
				K         int
				Objective float64
				Gap       *float64
				Extra     map[string]float64
			}
			err := json.Unmarshal(lines[at], &r)
			ok := err == nil && r.Algo == fmt.Sprintf("algo%d", i) && r.K == k && r.Objective == float64(k) &&
				(r.Gap != nil) == (k%3 == 0) && (r.Gap == nil || *r.Gap == float64(k)) &&
				(k%50 == 7) == (r.Extra != nil) && (r.Extra == nil || r.Extra["v"] == float64(k))
			if !ok {
				t.Fatalf("line %d: %s (%v); want trace %d's record %d as written", at, lines[at], err, i, k)
			}
			at++
		}
		var s struct{ Summary map[string]any }
		if err := json.Unmarshal(lines[at], &s); err != nil || s.Summary == nil || s.Summary["iters"] != float64(n) {
			t.Fatalf("line %d: %s (%v); want trace %d's summary after its %d records", at, lines[at], err, i, n)
		}
		at++
	}
	if at != len(lines)-1 || !bytes.Contains(lines[at], []byte(`"aggregate":"end"`)) {
		t.Fatalf("%d lines, the last %s; want the aggregate line last, at %d", len(lines), lines[len(lines)-1], at)
	}
}
