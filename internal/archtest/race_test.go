package archtest

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// make test runs the tests of the race part's packages (the Makefile's
// RACE_PKGS) only in test-race: under the detector, but for the tests
// RACE_OFF names, which run without it. A test of those packages that
// skips itself under the detector (it looks at raceEnabled) and is not
// named in RACE_OFF would run nowhere.

// raceOffViolations lists the tests of the files whose body refers to
// raceEnabled and whose name off does not match.
func raceOffViolations(fset *token.FileSet, files []*ast.File, off *regexp.Regexp) []string {
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			looks := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "raceEnabled" {
					looks = true
				}
				return !looks
			})
			if looks && !off.MatchString(fn.Name.Name) {
				out = append(out, fset.Position(fn.Pos()).String()+": "+fn.Name.Name)
			}
		}
	}
	return out
}

// TestRaceSkippersRunSomewhere: every test of RACE_PKGS that looks at
// raceEnabled is named in RACE_OFF.
func TestRaceSkippersRunSomewhere(t *testing.T) {
	mk := makefile(t)
	off := regexp.MustCompile(makeVar(t, mk, "RACE_OFF"))
	fset, files := testFiles(t, moduleRoot, makeVar(t, mk, "RACE_PKGS"))
	if len(files) < 20 {
		t.Fatalf("only %d test files in the race part's packages: the walk is broken", len(files))
	}
	for _, v := range raceOffViolations(fset, files, off) {
		t.Errorf("%s skips or changes under the race detector but is not named in the Makefile's RACE_OFF: it would run nowhere", v)
	}
	// every name RACE_OFF lists is a test of those packages (a test renamed
	// would go back under the detector, and the list would name nothing)
	tests := testNames(files)
	for _, name := range listedNames(t, "RACE_OFF", off) {
		if !tests[name] {
			t.Errorf("RACE_OFF names %s, which is no test of RACE_PKGS", name)
		}
	}
	// the known one is found (the check itself works on today's tree)
	found := raceOffViolations(fset, files, regexp.MustCompile(`^$`))
	if len(found) == 0 || !strings.Contains(strings.Join(found, " "), "TestFinishedRunsLeaveTheHeap") {
		t.Errorf("with an empty RACE_OFF the check should name TestFinishedRunsLeaveTheHeap; it names %q", found)
	}
}
