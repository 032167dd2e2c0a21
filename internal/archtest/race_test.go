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

// testFiles parses the _test.go files of the Makefile's package patterns
// pkgs (./a/b/ or ./a/b/...), under the module's root.
func testFiles(t *testing.T, root, pkgs string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range strings.Fields(pkgs) {
		dir := filepath.Join(root, strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/..."))
		recursive := strings.HasSuffix(p, "/...")
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != dir && !recursive {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, "_test.go") {
				return nil
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
	return fset, files
}

// testNames is the set of the files' test functions.
func testNames(files []*ast.File) map[string]bool {
	tests := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	return tests
}

// listedNames splits a Makefile variable of the form ^(A|B|...)$ into its
// names.
func listedNames(t *testing.T, name string, re *regexp.Regexp) []string {
	t.Helper()
	inner, ok := strings.CutPrefix(re.String(), "^(")
	inner, ok2 := strings.CutSuffix(inner, ")$")
	if !ok || !ok2 {
		t.Fatalf("%s is %q, want ^(A|B|...)$", name, re)
	}
	return strings.Split(inner, "|")
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
	fset, files := testFiles(t, root, makeVar(t, string(mk), "RACE_PKGS"))
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
