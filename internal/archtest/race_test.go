package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// make test runs the tests of the race part's packages (the Makefile's
// RACE_PKGS) only in test-race: under the detector, but for the tests
// RACE_OFF names, which run without it. A test of those packages that
// skips itself under the detector (it looks at raceEnabled) and is not
// named in RACE_OFF would run nowhere.

// makeVar returns the value of the Makefile variable name (NAME := value),
// with make's $$ read as $.
func makeVar(t *testing.T, makefile, name string) string {
	t.Helper()
	for _, l := range strings.Split(makefile, "\n") {
		if v, ok := strings.CutPrefix(l, name+" := "); ok {
			return strings.ReplaceAll(strings.TrimSpace(v), "$$", "$")
		}
	}
	t.Fatalf("the Makefile sets no %s", name)
	return ""
}

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
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	off := regexp.MustCompile(makeVar(t, string(mk), "RACE_OFF"))
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range strings.Fields(makeVar(t, string(mk), "RACE_PKGS")) {
		dir := filepath.Join(root, strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/..."))
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d test files in the race part's packages: the walk is broken", len(files))
	}
	for _, v := range raceOffViolations(fset, files, off) {
		t.Errorf("%s skips or changes under the race detector but is not named in the Makefile's RACE_OFF: it would run nowhere", v)
	}
	// every name RACE_OFF lists is a test of those packages (a test renamed
	// would go back under the detector, and the list would name nothing)
	tests := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	inner, ok := strings.CutPrefix(off.String(), "^(")
	inner, ok2 := strings.CutSuffix(inner, ")$")
	if !ok || !ok2 {
		t.Fatalf("RACE_OFF is %q, want ^(A|B|...)$", off)
	}
	for _, name := range strings.Split(inner, "|") {
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
