package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The size limits of the code map (ARCHITECTURE.md, "internal/archtest"): a function
// outside tests and generated code stays within maxFuncLines lines, one of
// the algorithm packages (strictPkgs) within maxStrictFuncLines; a file
// past maxFileLines lines is reported as one to split by concern. A
// function's length counts the lines from its "func" to its closing brace.
const (
	maxFuncLines       = 100
	maxStrictFuncLines = 60
	maxFileLines       = 600
)

// strictPkgs are the folders whose functions read as the paper's
// algorithms and keep to maxStrictFuncLines (their sub-packages too).
// Assembly stubs (declarations without a body) are one line and pass.
var strictPkgs = []string{"internal/solver", "internal/ssvm"}

// oversized lists functions past their limit that are let stand for now,
// by "folder/file.go:Func" (methods as "Type.Method") with their length.
// It is empty: every function is within its limit. The list may only
// shrink: a listed function that grows fails, a function past its limit
// that is not listed fails, and an entry whose function is back within
// its limit (or gone) fails until it is removed.
var oversized = map[string]int{}

// funcSize is one function declaration of the module's sources.
type funcSize struct {
	key   string // folder/file.go:Name or folder/file.go:Type.Name
	lines int
	limit int
}

// fileSize is one source file of the module.
type fileSize struct {
	path  string
	lines int
}

// generated reports whether a parsed file carries Go's "Code generated
// ... DO NOT EDIT." header.
func generated(f *ast.File) bool { return ast.IsGenerated(f) }

// funcName is a declaration's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.ParenExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// limitFor is the function limit of a module-relative folder.
func limitFor(dir string) int {
	for _, p := range strictPkgs {
		if under(dir, p) {
			return maxStrictFuncLines
		}
	}
	return maxFuncLines
}

// sizes walks the module's non-test, non-generated Go sources under root
// and returns every function with a body and every file with its length.
func sizes(t *testing.T, root string) ([]funcSize, []fileSize) {
	t.Helper()
	var funcs []funcSize
	var files []fileSize
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fs, fn, err := fileSizes(root, path, src)
		if err != nil {
			return err
		}
		if fs != nil {
			files = append(files, *fs)
		}
		funcs = append(funcs, fn...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return funcs, files
}

// fileSizes measures one source file: nil and no functions when it is
// generated code.
func fileSizes(root, path string, src []byte) (*fileSize, []funcSize, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	if generated(f) {
		return nil, nil, nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, nil, err
	}
	rel = filepath.ToSlash(rel)
	limit := limitFor(filepath.ToSlash(filepath.Dir(rel)))
	var funcs []funcSize
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Type.Func).Line + 1
		funcs = append(funcs, funcSize{key: rel + ":" + funcName(fd), lines: n, limit: limit})
	}
	lines := strings.Count(string(src), "\n")
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	return &fileSize{path: rel, lines: lines}, funcs, nil
}

// sizeViolations compares the functions with their limits and the
// allowlist, and returns what fails, sorted.
func sizeViolations(funcs []funcSize, allow map[string]int) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range funcs {
		if f.lines <= f.limit {
			continue
		}
		was, listed := allow[f.key]
		seen[f.key] = listed
		switch {
		case !listed:
			out = append(out, fmt.Sprintf("%s is %d lines, over the limit of %d: cut it into named steps", f.key, f.lines, f.limit))
		case f.lines > was:
			out = append(out, fmt.Sprintf("%s grew from %d to %d lines, over the limit of %d: it may only shrink", f.key, was, f.lines, f.limit))
		}
	}
	for key, n := range allow {
		if !seen[key] {
			out = append(out, fmt.Sprintf("%s (listed at %d lines) is within its limit or gone: remove it from the list of oversized functions", key, n))
		}
	}
	sort.Strings(out)
	return out
}

// The module's functions keep to the size limits, apart from the listed
// ones, which may only shrink.
func TestFunctionSizes(t *testing.T) {
	funcs, _ := sizes(t, moduleRoot)
	if len(funcs) < 500 {
		t.Fatalf("found %d functions; the walk did not see the module", len(funcs))
	}
	for _, v := range sizeViolations(funcs, oversized) {
		t.Error(v)
	}
}

// The files past maxFileLines lines, longest first: ones to split by
// concern (reported, not failed; make check-size prints the list).
func TestFileSizes(t *testing.T) {
	_, files := sizes(t, moduleRoot)
	sort.Slice(files, func(i, j int) bool {
		if files[i].lines != files[j].lines {
			return files[i].lines > files[j].lines
		}
		return files[i].path < files[j].path
	})
	n := 0
	for _, f := range files {
		if f.lines > maxFileLines {
			t.Logf("%5d lines  %s", f.lines, f.path)
			n++
		}
	}
	t.Logf("%d of %d source files pass %d lines (tests and generated code aside)", n, len(files), maxFileLines)
}

// body returns the source of a function of n lines in all, from its
// "func" line to its closing brace.
func body(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "func %s() {\n", name)
	for i := 0; i < n-2; i++ {
		b.WriteString("\t_ = 0\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// The check measures what it should and catches what it should: a long
// function in an ordinary package, a shorter one in an algorithm package,
// a listed function that grew, a stale entry; it passes one at the limit,
// a listed one that shrank, an assembly stub and generated code.
func TestSizeCheckCatchesPlantedFunctions(t *testing.T) {
	root := "/m"
	measure := func(path, src string) []funcSize {
		t.Helper()
		_, fn, err := fileSizes(root, root+"/"+path, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return fn
	}
	var funcs []funcSize
	funcs = append(funcs, measure("cmd/x/a.go", "package main\n\n"+body("atLimit", 100)+body("tooLong", 101))...)
	funcs = append(funcs, measure("internal/ssvm/b.go", "package ssvm\n\n"+body("strictOK", 60)+body("strictLong", 61)+"func stub(x int) int\n"+
		"type T struct{}\n\nfunc (t *T) "+strings.TrimPrefix(body("Grew", 70), "func "))...)
	funcs = append(funcs, measure("internal/solver/sub/c.go", "package sub\n\n"+body("shrank", 80))...)
	gen := measure("internal/server/d.go", "// Code generated by templ - DO NOT EDIT.\n\npackage server\n\n"+body("generated", 500))
	if len(gen) != 0 {
		t.Errorf("generated file measured: %v", gen)
	}
	for _, f := range funcs {
		if f.key == "internal/ssvm/b.go:stub" {
			t.Errorf("assembly stub measured: %v", f)
		}
	}
	allow := map[string]int{
		"internal/ssvm/b.go:T.Grew":        69,
		"internal/solver/sub/c.go:shrank":  90,
		"internal/session/gone.go:Removed": 120,
	}
	got := sizeViolations(funcs, allow)
	want := []string{
		"cmd/x/a.go:tooLong is 101 lines, over the limit of 100: cut it into named steps",
		"internal/session/gone.go:Removed (listed at 120 lines) is within its limit or gone: remove it from the list of oversized functions",
		"internal/ssvm/b.go:T.Grew grew from 69 to 70 lines, over the limit of 60: it may only shrink",
		"internal/ssvm/b.go:strictLong is 61 lines, over the limit of 60: cut it into named steps",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
