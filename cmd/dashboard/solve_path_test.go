package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/spec"
)

// -path goes to the algorithms of -algo that take it (cd) when the list
// holds one; given to no algorithm that takes it, or on a problem without
// a penalty λ, it is refused naming the flag.
func TestSolvePathFlag(t *testing.T) {
	out, stderr, code := solve(t, "-problem", "lasso", "-algo", "cd,fista", "-path", "10", "-print-spec")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r spec.Run
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Algorithms) != 2 || r.Algorithms[0].Path != 10 || r.Algorithms[1].Path != 0 {
		t.Errorf("-algo cd,fista -path 10 gives %+v, want path 10 on cd only", r.Algorithms)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-problem", "lasso", "-algo", "fista", "-path", "3"}, "-path: continuation along λ is a setting of cd only"},
		{[]string{"-problem", "lasso", "-algo", "fista,afw", "-path", "3"}, "-path: continuation along λ is a setting of cd only"},
		{[]string{"-problem", "lasso", "-algo", "cd", "-path", "-1"}, "-path: must be a number of continuation stages between 0 (none) and 1000"},
		{[]string{"-problem", "box", "-algo", "cd", "-path", "3"}, "has no λ"},
	} {
		_, stderr, code := solve(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "-path") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming -path and %q", c.args, code, stderr, c.want)
		}
	}
}
