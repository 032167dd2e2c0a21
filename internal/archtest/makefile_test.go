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

// What the checks of make test's parts read: the Makefile's variables and
// the tests of the packages they name.

// moduleRoot is the module's folder, seen from this package's.
var moduleRoot = filepath.Join("..", "..")

// makefile is the text of the module's Makefile.
func makefile(t *testing.T) string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(moduleRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	return string(mk)
}

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
