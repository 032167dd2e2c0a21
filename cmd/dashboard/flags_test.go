package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sharedFlagNames are the flags declared only through sharedFlags.
var sharedFlagNames = map[string]bool{"db": true, "data": true, "slots": true, "drain": true, "rescue-after": true}

// flagDecls lists the flags declared in src (fs.String("name", …), fs.Var(v,
// "name", …), sizeFlag(fs, "name", …) and the like) as "file:line -name".
func flagDecls(t *testing.T, file string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var name string
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		case *ast.Ident:
			name = fn.Name
		}
		pos := 0 // the argument that names the flag
		switch name {
		case "String", "Int", "Int64", "Bool", "Duration", "Float64":
		case "StringVar", "IntVar", "Int64Var", "BoolVar", "DurationVar", "Float64Var", "Var", "sizeFlag":
			pos = 1
		default:
			return true
		}
		if len(call.Args) <= pos {
			return true
		}
		if lit, ok := call.Args[pos].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, _ := strconv.Unquote(lit.Value)
			out = append(out, fmt.Sprintf("%s:%d -%s", filepath.Base(file), fset.Position(call.Pos()).Line, v))
		}
		return true
	})
	return out
}

// The shared flags are declared in flags.go alone: a command that declares
// -db, -data, -slots, -drain or -rescue-after itself fails here.
func TestSharedFlagsDefinedOnce(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || file == "flags.go" {
			continue
		}
		for _, d := range flagDecls(t, file, nil) {
			seen++
			if sharedFlagNames[d[strings.LastIndex(d, " -")+2:]] {
				t.Errorf("%s: a shared flag declared outside flags.go (use shared(fs))", d)
			}
		}
	}
	if seen < 40 {
		t.Fatalf("found %d flag declarations; the scan did not see the commands' flags", seen)
	}
	// the scan finds a planted declaration of each kind
	planted := `package main
func f() { fs.String("db", "", ""); fs.StringVar(&x, "data", "", ""); sizeFlag(fs, "mem", 0, "") }`
	if got := strings.Join(flagDecls(t, "planted.go", planted), ","); got != "planted.go:2 -db,planted.go:2 -data,planted.go:2 -mem" {
		t.Errorf("planted declarations: got %q", got)
	}
}

// Every command that shares a flag shows it in its -h with the help its
// table gives it (a command missing from a table fails here, not at a
// user's command line).
func TestSharedFlagsInEveryHelp(t *testing.T) {
	cmds := map[string]func(stderr *bytes.Buffer) int{
		"dashboard serve": func(e *bytes.Buffer) int {
			return serve(context.Background(), []string{"-h"}, &bytes.Buffer{}, e)
		},
		"dashboard worker": func(e *bytes.Buffer) int {
			return worker(context.Background(), []string{"-h"}, &bytes.Buffer{}, e)
		},
		"dashboard submit":       func(e *bytes.Buffer) int { return runSubmit([]string{"-h"}, nil, &bytes.Buffer{}, e) },
		"dashboard cancel":       func(e *bytes.Buffer) int { return runCancel([]string{"-h"}, &bytes.Buffer{}, e) },
		"dashboard import":       func(e *bytes.Buffer) int { return runImport([]string{"-h"}, nil, &bytes.Buffer{}, e) },
		"dashboard verify":       func(e *bytes.Buffer) int { return runVerify([]string{"-h"}, nil, &bytes.Buffer{}, e) },
		"dashboard solve -sweep": func(e *bytes.Buffer) int { return runSolve([]string{"-sweep", "x", "-h"}, &bytes.Buffer{}, e) },
	}
	want := map[string][]string{} // command → "-flag" + help
	for cmd, d := range dbFlags {
		want[cmd] = append(want[cmd], "-db string\n    \t"+d.help)
	}
	for cmd, d := range dataFlags {
		want[cmd] = append(want[cmd], "-data string\n    \t"+d.help)
	}
	for cmd, d := range workerFlags {
		want[cmd] = append(want[cmd], "-slots int\n    \t"+d.slotsHelp, "-drain duration\n    \t"+d.drainHelp, "-rescue-after duration\n    \t"+d.rescueHelp)
	}
	for cmd := range want {
		if cmds[cmd] == nil {
			t.Errorf("%s: a shared flag's table names a command this test does not run", cmd)
		}
	}
	for cmd, help := range cmds {
		var stderr bytes.Buffer
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s -h: panic: %v", cmd, p)
				}
			}()
			if code := help(&stderr); code != 0 {
				t.Errorf("%s -h: exit status %d: %s", cmd, code, stderr.String())
			}
		}()
		for _, f := range want[cmd] {
			if !strings.Contains(stderr.String(), f) {
				t.Errorf("%s -h lacks %q:\n%s", cmd, f, stderr.String())
			}
		}
	}
}
