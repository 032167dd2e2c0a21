package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fwlab/fwlab/"

// rule says what the packages under a folder must never import: fwlab
// packages by their path in the module (a prefix covers the package and
// those below it) and standard or third-party packages by import path.
type rule struct {
	pkg   string   // a folder of the module; its sub-packages too
	never []string // import paths (module-relative for fwlab's own)
}

// storage and serving: what the numerical layers must never see.
var serving = []string{
	"internal/server", "internal/session", "internal/queue", "internal/store",
	"cmd/", "net/http", "database/sql",
}

// rules is the code map's import rules (ARCHITECTURE.md, "Code map").
var rules = []rule{
	{"internal/solver", append([]string{"internal/", "web"}, serving...)},
	{"internal/dense", append([]string{"internal/", "web"}, serving...)},
	{"internal/spec", append([]string{"internal/", "web"}, serving...)},
	{"internal/recordfields", append([]string{"internal/scenarios", "internal/bundle", "internal/verify", "web"}, serving...)},
	{"internal/problems", append([]string{"internal/scenarios", "internal/ssvm", "web"}, serving...)},
	{"internal/ssvm", append([]string{"internal/scenarios", "internal/problems", "web"}, serving...)},
	{"internal/scenarios", append([]string{"web"}, serving...)},
	{"internal/aggregate", append([]string{"internal/figures", "internal/scenarios", "web"}, serving...)},
	{"internal/figures", append([]string{"internal/scenarios", "web"}, serving...)},
	{"internal/store", []string{"internal/session", "internal/queue", "internal/server", "internal/scenarios", "web", "cmd/", "net/http"}},
	{"internal/bundle", []string{"internal/session", "internal/queue", "internal/server", "web", "cmd/", "net/http"}},
	{"internal/verify", []string{"internal/session", "internal/queue", "internal/server", "web", "cmd/", "net/http"}},
	{"internal/session", []string{"internal/server", "internal/queue", "web", "cmd/", "net/http"}},
	{"internal/queue", []string{"internal/server", "web", "cmd/"}},
	{"internal/server", []string{"internal/queue", "cmd/"}},
	{"web", []string{"internal/server", "internal/session", "internal/store", "internal/queue", "cmd/"}},
	{"internal/", []string{"cmd/"}},
	// a test's small file system: no fwlab package at all
	{"internal/fulldisk", []string{"internal/", "fw", "web", "cmd/"}},
	// the client of runs opened from outside: HTTP and the record type only
	{"fw/live", []string{"internal/server", "internal/session", "internal/queue", "internal/store", "internal/scenarios", "internal/bundle", "web", "cmd/", "database/sql"}},
}

// imports returns the non-test imports of every Go package of the module,
// by module-relative folder, read from the sources.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			out[rel] = append(out[rel], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// under reports whether the folder pkg is dir or lies below it.
func under(pkg, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}

// forbidden reports whether an import path matches a rule's entry: fwlab
// packages by module-relative prefix, others by path or path prefix.
func forbidden(imp, never string) bool {
	if rel, ok := strings.CutPrefix(imp, module); ok {
		if strings.HasSuffix(never, "/") {
			return strings.HasPrefix(rel, never)
		}
		return under(rel, never)
	}
	if strings.HasSuffix(never, "/") || strings.HasPrefix(never, "internal") || never == "web" {
		return false
	}
	return imp == never || strings.HasPrefix(imp, never+"/")
}

// violations lists the imports that break a rule, as "pkg imports x".
func violations(byPkg map[string][]string) []string {
	var out []string
	for pkg, ims := range byPkg {
		for _, r := range rules {
			if !under(pkg, r.pkg) {
				continue
			}
			for _, im := range ims {
				for _, n := range r.never {
					// a package may import its own sub-packages
					if rel, ok := strings.CutPrefix(im, module); ok && under(rel, pkg) {
						continue
					}
					if rel, ok := strings.CutPrefix(im, module); ok && under(rel, r.pkg) && under(r.pkg, strings.TrimSuffix(n, "/")) {
						continue
					}
					if forbidden(im, n) {
						out = append(out, pkg+" imports "+strings.TrimPrefix(im, module)+" (rule of "+r.pkg+": never "+n+")")
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestCodeMapImportRules(t *testing.T) {
	byPkg := imports(t, moduleRoot)
	if len(byPkg) < 20 {
		t.Fatalf("found %d packages; the walk did not see the module", len(byPkg))
	}
	for _, v := range violations(byPkg) {
		t.Error(v)
	}
}

// The rules catch an import that breaks them: each planted import is found.
func TestCodeMapRulesCatchPlantedImports(t *testing.T) {
	for _, tc := range []struct{ pkg, imp string }{
		{"internal/solver", module + "internal/spec"},
		{"internal/solver", "net/http"},
		{"internal/problems/toy", module + "internal/store"},
		{"internal/scenarios", module + "internal/session"},
		{"internal/store/pgstore", module + "internal/queue"},
		{"internal/session", module + "internal/server"},
		{"web/templates", module + "internal/store"},
		{"internal/server", module + "cmd/dashboard"},
	} {
		got := violations(map[string][]string{tc.pkg: {tc.imp}})
		if len(got) == 0 {
			t.Errorf("%s importing %s: no rule broken, want one", tc.pkg, tc.imp)
		}
	}
	for _, tc := range []struct{ pkg, imp string }{
		{"internal/solver", "math"},
		{"internal/store/pgstore", module + "internal/store"},
		{"internal/problems/svmdual", module + "internal/problems/glm"},
		{"internal/server", module + "internal/session"},
		{"cmd/dashboard", module + "internal/queue"},
	} {
		if got := violations(map[string][]string{tc.pkg: {tc.imp}}); len(got) != 0 {
			t.Errorf("%s importing %s is allowed, got %v", tc.pkg, tc.imp, got)
		}
	}
}
