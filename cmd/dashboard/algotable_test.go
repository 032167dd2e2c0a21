package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Every algorithm of the table runs, as its row says it runs, on every
// problem that offers it, and is refused, naming the field, on every
// other: from the spec (scenarios.Resolve), the command line (solve) and
// the API (POST /api/runs, run to its end). Built with -tags algos_extra
// the table has one more row (afw-extra), which runs with no other edit.
func TestAlgorithmTableFromCLIAndAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := startServe(t, ctx, false)
	defer func() { cancel(); <-done }()
	ran, refused := 0, 0
	defer func() {
		t.Logf("%d runs, %d refusals (each from the spec, the command line and the API)", ran, refused)
	}()
	for _, s := range scenarios.All() {
		for _, a := range spec.Algorithms {
			offered := slices.Contains(s.Algorithms, a.Name)
			if offered && s.Name == "ssvm-ocr" {
				continue // a full decoding pass of 6251 words per evaluation: scenarios' own tests run it
			}
			run := spec.Run{Problem: s.Name, Algorithms: []spec.Algo{{Algo: a.Name}}, Iters: 2}
			body, _ := json.Marshal(run)
			_, _, err := scenarios.Resolve(&run)
			var fe *spec.FieldError
			switch {
			case offered && err != nil:
				t.Errorf("spec %s on %s: %v", a.Name, s.Name, err)
			case !offered && (!errors.As(err, &fe) || fe.Field != "algorithms[0].algo" || !strings.Contains(err.Error(), a.Name+" does not apply to problem "+s.Name)):
				t.Errorf("spec %s on %s: error %v, want a refusal naming algorithms[0].algo", a.Name, s.Name, err)
			}
			out, stderr, code := solve(t, "-problem", s.Name, "-algo", a.Name, "-iters", "2")
			switch {
			case offered && code != 0:
				t.Errorf("solve %s on %s: exit %d: %s", a.Name, s.Name, code, stderr)
			case offered && !strings.Contains(out, `"k":2`):
				t.Errorf("solve %s on %s: no record of iteration 2: %.300s", a.Name, s.Name, out)
			case !offered && (code == 0 || !strings.Contains(stderr, "-algo: ") || !strings.Contains(stderr, a.Name+" does not apply to problem "+s.Name)):
				t.Errorf("solve %s on %s: exit %d, %q: want a refusal naming -algo", a.Name, s.Name, code, stderr)
			}
			resp, err := http.Post(url+"/api/runs", "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct{ ID, Field, Error string }
			json.Unmarshal(msg, &e)
			if !offered {
				refused++
				if resp.StatusCode != http.StatusBadRequest || e.Field != "algorithms[0].algo" || !strings.Contains(e.Error, a.Name+" does not apply to problem "+s.Name) {
					t.Errorf("POST %s on %s: %d %s", a.Name, s.Name, resp.StatusCode, msg)
				}
				continue
			}
			ran++
			if resp.StatusCode != http.StatusCreated || e.ID == "" {
				t.Errorf("POST %s on %s: %d %s", a.Name, s.Name, resp.StatusCode, msg)
				continue
			}
			if st := waitFinished(t, url, e.ID, 2*time.Minute); st.Status != "done" || st.Records != 3 {
				t.Errorf("POST %s on %s: the run ended %s with %d records, want done with 3 (%s)", a.Name, s.Name, st.Status, st.Records, get(t, url+"/api/runs/"+e.ID))
			}
		}
	}
}

// The variants the solver runs for a Config that names a built-in
// algorithm (solver.Builtin, for callers that give no variant) are the
// table's rows, and every row's method is one its family's code runs.
func TestBuiltinVariantsAreTheTable(t *testing.T) {
	for name, v := range solver.Builtin {
		a := spec.AlgorithmByName(name)
		if a == nil {
			t.Errorf("solver.Builtin has %s, the table does not", name)
			continue
		}
		if solver.Variant(a.Runs) != v {
			t.Errorf("%s: the table runs it as %+v, solver.Builtin as %+v", name, a.Runs, v)
		}
	}
	for _, a := range spec.Algorithms {
		if !slices.Contains(spec.Methods[a.Family], a.Method) {
			t.Errorf("%s (family %s) runs as %q, not one of the family's methods %v", a.Name, a.Family, a.Method, spec.Methods[a.Family])
		}
		if a.Reshape && (a.Family != "fw" || a.Method == "fw") {
			t.Errorf("%s: the slack collapse needs the family fw with away or pairwise directions, got %s/%s", a.Name, a.Family, a.Method)
		}
		if !a.TakesStepsize(a.Stepsize) {
			t.Errorf("%s: default stepsize %q is not one of its rules %v", a.Name, a.Stepsize, a.Stepsizes)
		}
	}
}
