package archtest

import (
	"regexp"
	"testing"
)

// make test leaves the tests the Makefile's ALONE names out of its package
// tests and runs them in a go test of their own over ALONE_PKGS, with
// nothing else of the suite beside them. A name there that is no test of
// those packages (a test renamed) would run nowhere: skipped by the one go
// test, not found by the other.
func TestAloneTestsRunSomewhere(t *testing.T) {
	mk := makefile(t)
	alone := regexp.MustCompile(makeVar(t, mk, "ALONE"))
	_, files := testFiles(t, moduleRoot, makeVar(t, mk, "ALONE_PKGS"))
	tests := testNames(files)
	if len(tests) < 20 {
		t.Fatalf("only %d tests in ALONE_PKGS: the walk is broken", len(tests))
	}
	for _, name := range listedNames(t, "ALONE", alone) {
		if !tests[name] {
			t.Errorf("ALONE names %s, which is no test of ALONE_PKGS (%s): it would run nowhere", name, makeVar(t, mk, "ALONE_PKGS"))
		}
	}
}
