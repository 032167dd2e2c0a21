package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/spec"
)

type solveSummary struct {
	Status string  `json:"status"`
	Iters  int     `json:"iters"`
	Passes float64 `json:"passes"`
}

func lastSummary(t *testing.T, out string) solveSummary {
	t.Helper()
	ls := parseLines(t, out)
	if len(ls) == 0 || ls[len(ls)-1].Summary == nil {
		t.Fatalf("no summary in %q", out)
	}
	var s solveSummary
	if err := json.Unmarshal(ls[len(ls)-1].Summary, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// -passes alone governs: bcfw on 50 words takes 50 iterations per pass, so
// 30 passes need 1500 iterations, more than the default iteration limit.
func TestSolvePassesAloneGovern(t *testing.T) {
	base := []string{"-problem", "ssvm-chain", "-train", "50", "-test", "5", "-algo", "bcfw", "-eval-every", "500"}
	for _, c := range []struct {
		name        string
		args        []string
		status      string
		iters       int
		passesLeast float64
	}{
		{"passes alone", []string{"-passes", "30"}, "max_passes", 1500, 30},
		{"iters 0 is no limit", []string{"-iters", "0", "-passes", "25"}, "max_passes", 1250, 25},
		{"both: the first reached", []string{"-iters", "100", "-passes", "30"}, "max_iters", 100, 2},
		{"iters alone", []string{"-iters", "60"}, "max_iters", 60, 1.2},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := solve(t, append(append([]string{}, base...), c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			s := lastSummary(t, out)
			if s.Status != c.status || s.Iters != c.iters || s.Passes < c.passesLeast-1e-9 {
				t.Fatalf("summary %+v, want status %s after %d iterations, ≥ %v passes", s, c.status, c.iters, c.passesLeast)
			}
		})
	}
}

// The default seed is the spec's: no -seed is -seed spec.DefaultSeed.
func TestSolveDefaultSeedIsTheSpecs(t *testing.T) {
	args := []string{"-problem", "lasso", "-algo", "ssfw-as", "-iters", "5", "-eval-every", "1"}
	plain, _, code := solve(t, args...)
	seeded, _, code2 := solve(t, append(args, "-seed", strconv.FormatInt(spec.DefaultSeed, 10))...)
	if code != 0 || code2 != 0 {
		t.Fatalf("exit %d, %d", code, code2)
	}
	if stripTimes(plain) != stripTimes(seeded) {
		t.Fatalf("no -seed differs from -seed %d", spec.DefaultSeed)
	}
}

// The same spec, with no seed, gives the same instance and the same
// deterministic trajectory through the command line and through the API.
func TestSolveAndAPIAgreeOnTheDefaultSeed(t *testing.T) {
	objectives := func(out string) []float64 {
		var obj []float64
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r struct {
				K         *int     `json:"k"`
				Objective *float64 `json:"objective"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			if r.K != nil && r.Objective != nil {
				obj = append(obj, *r.Objective)
			}
		}
		return obj
	}
	cli, stderr, code := solve(t, "-problem", "lasso", "-algo", "afw", "-iters", "5", "-eval-every", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	other, _, _ := solve(t, "-problem", "lasso", "-algo", "afw", "-iters", "5", "-seed", "1", "-eval-every", "1")
	want, diff := objectives(cli), objectives(other)
	if len(want) != 6 || len(diff) != 6 {
		t.Fatalf("%d and %d evaluated records, want 6", len(want), len(diff))
	}
	if want[0] == diff[0] {
		t.Fatalf("seeds 0 and 1 give the same starting objective %v: the comparison would prove nothing", want[0])
	}

	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() { ts.Close(); srv.Close() }()
	body := `{"problem":"lasso","algorithms":[{"algo":"afw"}],"iters":5,"eval_every":1}`
	resp, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || err != nil {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	waitDone(t, ts.URL, created.ID)
	resp, err = http.Get(ts.URL + "/api/runs/" + created.ID + "/trace")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := objectives(string(b))
	if len(got) != len(want) {
		t.Fatalf("API trace has %d evaluated records, the command %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: API objective %v, command %v", i, got[i], want[i])
		}
	}
}

// waitDone polls a run's status until it is no longer running.
func waitDone(t *testing.T, base, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/api/runs/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Status string }
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch st.Status {
		case "running", "paused", "queued":
			time.Sleep(20 * time.Millisecond)
			continue
		case "done":
			return
		default:
			t.Fatalf("run %s ended %q", id, st.Status)
		}
	}
	t.Fatalf("run %s still running after 30 s", id)
}

// -print-spec writes the JSON spec a command line stands for: the API takes
// it as it is and runs the same records.
func TestPrintSpecIsWhatTheAPIRuns(t *testing.T) {
	args := []string{"-problem", "lasso", "-n", "40", "-p", "8", "-algo", "ssfw-as", "-iters", "6", "-seed", "4", "-replications", "2", "-eval-every", "1"}
	specOut, stderr, code := solve(t, append(args, "-print-spec")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sp spec.Run
	dec := json.NewDecoder(strings.NewReader(specOut))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		t.Fatalf("%v in %s", err, specOut)
	}
	if sp.Problem != "lasso" || sp.Seed != 4 || sp.Iters != 6 || sp.Replications != 2 || sp.Params["n"] != "40" {
		t.Fatalf("spec %+v", sp)
	}
	cli, _, code := solve(t, args...)
	if code != 0 {
		t.Fatal("the run failed")
	}
	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() { ts.Close(); srv.Close() }()
	resp, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(specOut))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || err != nil {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	waitDone(t, ts.URL, created.ID)
	resp, err = http.Get(ts.URL + "/api/runs/" + created.ID + "/trace")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Compare (replication, k, objective, gap) of every evaluated record.
	key := func(out string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			var r struct {
				Replication int      `json:"replication"`
				K           *int     `json:"k"`
				Objective   *float64 `json:"objective"`
				Gap         *float64 `json:"gap"`
			}
			if json.Unmarshal([]byte(l), &r) != nil || r.K == nil || r.Objective == nil {
				continue
			}
			m[fmt.Sprintf("%d/%d/%v/%v", r.Replication, *r.K, *r.Objective, *r.Gap)] = true
		}
		return m
	}
	a, c := key(cli), key(string(b))
	if len(a) != 14 || !reflect.DeepEqual(a, c) {
		t.Fatalf("command line %d records, API %d; equal %v", len(a), len(c), reflect.DeepEqual(a, c))
	}
}

// Without -iters or -passes a command runs its problem's default limits:
// 30 passes on OCR (whose evaluations cost passes), the default iterations
// elsewhere; either flag replaces them.
func TestSolveDefaultBudget(t *testing.T) {
	for _, c := range []struct {
		args   []string
		iters  int
		passes float64
	}{
		{[]string{"-problem", "ssvm-ocr", "-algo", "bcfw"}, 200000, 30},
		{[]string{"-problem", "ssvm-ocr", "-algo", "bcfw", "-iters", "50"}, 50, 0},
		{[]string{"-problem", "ssvm-ocr", "-algo", "bcfw", "-passes", "2"}, spec.MaxIters, 2},
		{[]string{"-problem", "ssvm-chain", "-algo", "bcfw"}, spec.DefaultIters, 0},
	} {
		out, stderr, code := solve(t, append(c.args, "-print-spec")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		var sp spec.Run
		if err := json.Unmarshal([]byte(out), &sp); err != nil {
			t.Fatalf("%v: %v in %s", c.args, err, out)
		}
		if sp.Iters != c.iters || sp.Passes != c.passes {
			t.Errorf("%v: iters %d, passes %v; want %d, %v", c.args, sp.Iters, sp.Passes, c.iters, c.passes)
		}
	}
}
