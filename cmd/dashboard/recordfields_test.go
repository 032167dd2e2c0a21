package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/verify"
)

// Every declared record field (internal/recordfields) travels every path a
// record takes: solve's JSON Lines and CSV, a bundle with its digest,
// import into SQLite and PostgreSQL, the server's trace download as JSON
// Lines and CSV, the bundle exported again, and verify's re-run. Built with
// -tags recordfields_extra, the declaration has one more field, set by its
// producer, and this test (with no other edit) checks it on every path too.
func TestDeclaredFieldsTravelEveryPath(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-problem", "lasso", "-n", "30", "-p", "12", "-algo", "ssfw-as,afw", "-iters", "30", "-eval-every", "3", "-seed", "4"}
	file := filepath.Join(dir, "run.json")
	if _, stderr, code := solve(t, append(args, "-format", "json", "-out", file)...); code != 0 {
		t.Fatalf("solve: %d %s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.CheckDigest(b); err != nil {
		t.Fatal(err)
	}
	var want []solver.Record // every trace's, in order
	for _, tr := range b.Traces {
		want = append(want, tr.Records...)
	}
	// each field a producer sets is set on every evaluated record
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if f.Produce == nil {
			continue
		}
		for j := range want {
			if want[j].Evaluated() && f.Zero(&want[j]) {
				t.Fatalf("bundle record %d: %s is not set", j, f.JSON)
			}
		}
		if !strings.Contains(string(data), `"`+f.JSON+`":`) {
			t.Fatalf("the bundle does not carry %s", f.JSON)
		}
	}
	// solve's JSON Lines and CSV: the same records but for the wall clock
	out, stderr, code := solve(t, append(args, "-format", "jsonl")...)
	if code != 0 {
		t.Fatalf("solve jsonl: %d %s", code, stderr)
	}
	sameButClock(t, "solve jsonl", jsonLines(t, out, "algo", "replication"), want)
	out, stderr, code = solve(t, append(args, "-format", "csv")...)
	if code != 0 {
		t.Fatalf("solve csv: %d %s", code, stderr)
	}
	sameButClock(t, "solve csv", csvRows(t, out, 2), want)

	// import into SQLite and PostgreSQL: bit for bit, and exported again as
	// the same bundle, digest included
	db := filepath.Join(dir, "store", "fwlab.db")
	pg := pgtest.Shared(t).NewDB(t)
	ctx := context.Background()
	for _, target := range []string{db, pg} {
		o, stderr, code := runImportArgs("-db", target, file)
		if code != 0 {
			t.Fatalf("import into %s: %d %s", target, code, stderr)
		}
		id := strings.Fields(o)[2]
		var st store.Backend
		if target == pg {
			st, err = pgstore.Open(ctx, pg)
		} else {
			st, err = store.Open(db)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []solver.Record
		for i := range b.Traces {
			recs, err := st.Records(ctx, id, i, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, recs...)
		}
		exactly(t, "stored in "+target, got, want)
		exp, err := bundle.FromStore(ctx, st, id)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d := bundle.Digest(exp); d != b.Digest {
			t.Errorf("exported from %s: digest %s, want %s", target, d, b.Digest)
		}
		exp.Aggregates, exp.Created = b.Aggregates, b.Created
		var again bytes.Buffer
		if err := bundle.Encode(&again, exp); err != nil {
			t.Fatal(err)
		}
		if again.String() != string(data) {
			t.Errorf("the bundle exported from %s differs from the file solve wrote", target)
		}
	}

	// the server's trace download, from the SQLite store
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, done := startServe(t, sctx, false, "-db", db)
	defer func() { cancel(); <-done }()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := st.List(ctx, store.Filter{})
	st.Close()
	if err != nil || len(list) != 1 {
		t.Fatalf("%d runs stored, %v", len(list), err)
	}
	get := func(q string) string {
		resp, err := http.Get(url + "/api/runs/" + list[0].ID + "/trace" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("trace%s: %d %s", q, resp.StatusCode, body)
		}
		return string(body)
	}
	exactly(t, "server jsonl", jsonLines(t, get(""), "trace", "algo", "replication"), want)
	exactly(t, "server csv", csvRows(t, get("?format=csv"), 3), want)

	// verify re-runs the bundle and compares every field but the wall clock
	if o, stderr, code := runVerifyArgs(file); code != 0 {
		t.Fatalf("verify: %d %s %s", code, o, stderr)
	}
}

// jsonLines reads records written as JSON objects, one a line, with the
// tags (dropped) and the declared fields.
func jsonLines(t *testing.T, text string, tags ...string) []solver.Record {
	t.Helper()
	var out []solver.Record
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if _, ok := raw["k"]; !ok {
			continue // a summary
		}
		for _, k := range tags {
			delete(raw, k)
		}
		var r solver.Record
		for i := range recordfields.Fields {
			f := &recordfields.Fields[i]
			v, ok := raw[f.JSON]
			delete(raw, f.JSON)
			if !ok {
				if !f.Omit {
					t.Fatalf("%s missing: %s", f.JSON, sc.Text())
				}
				continue
			}
			setText(t, f, &r, string(v), true)
		}
		if len(raw) > 0 {
			t.Fatalf("undeclared fields %v: %s", raw, sc.Text())
		}
		out = append(out, r)
	}
	return out
}

// csvRows reads CSV rows whose first skip columns are tags: the declared
// columns, then the metrics (one JSON cell "extra", or "extra.KEY" columns).
func csvRows(t *testing.T, text string, skip int) []solver.Record {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := rows[0][skip:]
	decl := recordfields.CSVHeader()
	if strings.Join(header[:len(decl)], ",") != strings.Join(decl, ",") {
		t.Fatalf("CSV header %v, declared %v", header, decl)
	}
	var out []solver.Record
	for _, row := range rows[1:] {
		row = row[skip:]
		var r solver.Record
		j := 0
		for i := range recordfields.Fields {
			f := &recordfields.Fields[i]
			if f.Kind == recordfields.Metrics {
				continue
			}
			if row[j] != "" || f.Kind != recordfields.OptFloat {
				setText(t, f, &r, row[j], false)
			}
			j++
		}
		for ; j < len(header); j++ {
			switch {
			case header[j] == recordfields.MetricsField.CSV && row[j] != "":
				if err := json.Unmarshal([]byte(row[j]), &r.Extra); err != nil {
					t.Fatal(err)
				}
			case strings.HasPrefix(header[j], recordfields.MetricsField.CSV+".") && row[j] != "":
				v, err := strconv.ParseFloat(row[j], 64)
				if err != nil {
					t.Fatal(err)
				}
				if r.Extra == nil {
					r.Extra = map[string]float64{}
				}
				r.Extra[strings.TrimPrefix(header[j], recordfields.MetricsField.CSV+".")] = v
			}
		}
		out = append(out, r)
	}
	return out
}

// setText sets field f of r from its text in JSON (quoted strings, null) or CSV.
func setText(t *testing.T, f *recordfields.Field, r *solver.Record, s string, isJSON bool) {
	t.Helper()
	var err error
	switch f.Kind {
	case recordfields.Int:
		var v int
		v, err = strconv.Atoi(s)
		f.SetInt(r, v)
	case recordfields.Float:
		var v float64
		v, err = strconv.ParseFloat(s, 64)
		f.SetFloat(r, v)
	case recordfields.String:
		if isJSON {
			s, err = strconv.Unquote(s)
		}
		f.SetStr(r, s)
	case recordfields.OptFloat:
		if s != "null" {
			var v float64
			v, err = strconv.ParseFloat(s, 64)
			f.SetOpt(r, v)
		}
	case recordfields.Metrics:
		var m map[string]float64
		err = json.Unmarshal([]byte(s), &m)
		for k, v := range m {
			if r.Extra == nil {
				r.Extra = map[string]float64{}
			}
			r.Extra[k] = v
		}
	}
	if err != nil {
		t.Fatalf("%s %q: %v", f.JSON, s, err)
	}
}

// exactly checks that got are want, bit for bit, field by declared field.
func exactly(t *testing.T, what string, got, want []solver.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := recordfields.Diff(&got[i], &want[i]); d != "" {
			t.Fatalf("%s: record %d: %s", what, i, d)
		}
	}
}

// sameButClock checks that a re-run's records got are want but for the
// wall-clock fields, as verify compares them.
func sameButClock(t *testing.T, what string, got, want []solver.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if field, w, g := verify.Record(&want[i], &got[i]); field != "" {
			t.Fatalf("%s: record %d: %s %s, want %s", what, i, field, g, w)
		}
	}
}
