package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// openblasLibs are where Debian and the usual source installs put
// libopenblas.so.
var openblasLibs = []string{
	"/usr/lib/x86_64-linux-gnu/libopenblas.so",
	"/usr/lib/aarch64-linux-gnu/libopenblas.so",
	"/usr/lib64/libopenblas.so",
	"/usr/lib/libopenblas.so",
	"/usr/local/lib/libopenblas.so",
	"/opt/OpenBLAS/lib/libopenblas.so",
}

// openblasMissing says what the OpenBLAS build (-tags openblas) lacks on
// this machine: a C compiler for cgo, or the library; "" when it can build.
func openblasMissing(gobin string) string {
	cc := "gcc"
	if out, err := exec.Command(gobin, "env", "CC").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		cc = strings.Fields(string(out))[0]
	}
	if _, err := exec.LookPath(cc); err != nil {
		return fmt.Sprintf("no C compiler (%s) for cgo", cc)
	}
	if exec.Command("pkg-config", "--exists", "openblas").Run() == nil {
		return ""
	}
	for _, f := range openblasLibs {
		if _, err := os.Stat(f); err == nil {
			return ""
		}
	}
	return "no libopenblas.so (Debian: apt-get install libopenblas-dev)"
}

// TestOpenBLASBuildGivesTheSameTraces builds the dashboard twice, pure Go
// and with -tags openblas (make build-openblas), and checks that `solve`
// prints the same traces for spg and bc-ssfw-as on the GFLASSO at the
// paper's size and at ten times that size: the same records, steps, batches
// and active counts, and objectives and gaps equal to rounding. OpenBLAS sums
// each product in another order, so the figures differ in the last bits
// (about 1e-15 relative on these runs, the gap by about 1e-14·F, since it
// is a difference of terms of the size of F); the test allows 1e-9·|F| for
// both, which an actual fault of the binding (a transposed or misplaced
// operand) exceeds by orders of magnitude. Without cgo or OpenBLAS it fails
// when CI is set and otherwise skips (make test says so). It calls
// t.Parallel: its builds and solves, which wait on nothing, overlap the
// other tests' waits.
func TestOpenBLASBuildGivesTheSameTraces(t *testing.T) {
	t.Parallel()
	// The go command that runs this test (make test's $(GO)), else the one
	// on PATH.
	gobin := "go"
	if g := os.Getenv("GOROOT"); g != "" {
		if _, err := os.Stat(filepath.Join(g, "bin", "go")); err == nil {
			gobin = filepath.Join(g, "bin", "go")
		}
	}
	if _, err := exec.LookPath(gobin); err != nil {
		t.Fatalf("no go command to build the two binaries: %v", err)
	}
	if why := openblasMissing(gobin); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the OpenBLAS build cannot be checked: %s", why)
		}
		t.Skipf("SKIPPED: the OpenBLAS build cannot be checked: %s", why)
	}
	dir := t.TempDir()
	pure, tagged := filepath.Join(dir, "dashboard"), filepath.Join(dir, "dashboard-openblas")
	for _, b := range []struct {
		out  string
		args []string
	}{
		{pure, nil},
		{tagged, []string{"-tags", "openblas"}},
	} {
		args := append([]string{"build"}, b.args...)
		args = append(args, "-o", b.out, ".")
		cmd := exec.Command(gobin, args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The tagged binary must really carry the binding, or the comparison
	// below compares the pure build with itself.
	if out, err := exec.Command(gobin, "version", "-m", tagged).Output(); err != nil {
		t.Fatalf("go version -m: %v", err)
	} else if !strings.Contains(string(out), "gonum.org/v1/netlib") {
		t.Fatalf("the -tags openblas build does not contain gonum's netlib binding:\n%s", out)
	}
	paper := []string{"-problem", "gflasso", "-seed", "1", "-eval-every", "1"}
	tenX := []string{"-problem", "gflasso", "-n", "1000", "-j", "500", "-k", "50",
		"-lambda", "30", "-gamma", "30", "-threshold", "0.7", "-seed", "1", "-eval-every", "10"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"paper/spg", append(append([]string{}, paper...), "-algo", "spg", "-iters", "300")},
		{"paper/bc-ssfw-as", append(append([]string{}, paper...), "-algo", "bc-ssfw-as", "-iters", "300")},
		{"10x/spg", append(append([]string{}, tenX...), "-algo", "spg", "-iters", "100")},
		{"10x/bc-ssfw-as", append(append([]string{}, tenX...), "-algo", "bc-ssfw-as", "-iters", "60")},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"solve", "-format", "jsonl"}, c.args...)
			a, b := runTrace(t, pure, args), runTrace(t, tagged, args)
			compareTraces(t, a, b, 1e-9)
		})
	}
}

// traceLine is one line of `solve -format jsonl`: a record or the summary.
type traceLine struct {
	K         *int     `json:"k"`
	Passes    float64  `json:"passes"`
	Step      string   `json:"step"`
	Batch     int      `json:"batch"`
	Active    int      `json:"active"`
	Objective *float64 `json:"objective"`
	Gap       *float64 `json:"gap"`
	Summary   *struct {
		Status    string   `json:"status"`
		Iters     int      `json:"iters"`
		Passes    float64  `json:"passes"`
		Objective *float64 `json:"objective"`
		Gap       *float64 `json:"gap"`
	} `json:"summary"`
}

func runTrace(t *testing.T, bin string, args []string) []traceLine {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, errb.String())
	}
	var lines []traceLine
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l traceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: line %d: %v: %s", filepath.Base(bin), len(lines)+1, err, sc.Text())
		}
		lines = append(lines, l)
	}
	if len(lines) < 3 || lines[len(lines)-1].Summary == nil {
		t.Fatalf("%s: %d lines and no summary at the end", filepath.Base(bin), len(lines))
	}
	return lines
}

// compareTraces checks that b is a to rounding: everything discrete equal,
// objectives and gaps within tol·max(1, |F|).
func compareTraces(t *testing.T, a, b []traceLine, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("pure Go gives %d lines, OpenBLAS %d", len(a), len(b))
	}
	scale := 1.0
	near := func(what string, i int, x, y *float64) {
		t.Helper()
		switch {
		case x == nil && y == nil:
		case x == nil || y == nil:
			t.Errorf("line %d: %s is %v in pure Go, %v with OpenBLAS", i+1, what, x, y)
		case math.Abs(*x-*y) > tol*scale:
			t.Errorf("line %d: %s %v in pure Go, %v with OpenBLAS (difference %.3g > %.0e·%.6g)",
				i+1, what, *x, *y, math.Abs(*x-*y), tol, scale)
		}
	}
	for i := range a {
		x, y := a[i], b[i]
		if s := x.Summary; s != nil {
			u := y.Summary
			if u == nil || s.Status != u.Status || s.Iters != u.Iters || s.Passes != u.Passes {
				t.Fatalf("summaries differ: pure Go %+v, OpenBLAS %+v", *s, u)
			}
			near("summary objective", i, s.Objective, u.Objective)
			near("summary gap", i, s.Gap, u.Gap)
			continue
		}
		if x.K == nil || y.K == nil || *x.K != *y.K || x.Step != y.Step || x.Batch != y.Batch ||
			x.Active != y.Active || x.Passes != y.Passes {
			t.Fatalf("line %d differs: pure Go %+v, OpenBLAS %+v", i+1, x, y)
		}
		if x.Objective != nil {
			scale = math.Max(1, math.Abs(*x.Objective))
		}
		near("objective", i, x.Objective, y.Objective)
		near("gap", i, x.Gap, y.Gap)
	}
}
