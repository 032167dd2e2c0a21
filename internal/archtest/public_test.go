package archtest

import (
	"strings"
	"testing"
)

// The public packages' rules (ARCHITECTURE.md, "Code map"): fw/methods may
// import fw, internal/solver and internal/spec, never the catalogue or what
// serves and stores runs; no internal package imports fw/methods (the
// solver is below it); the Go programs of examples/ use the public
// packages only, as a user's program does. The package fw itself imports no fwlab package,
// which TestPublicContractStandsAlone checks.
func init() {
	rules = append(rules,
		rule{"fw/methods", append([]string{"internal/scenarios", "internal/problems", "internal/ssvm", "web"}, serving...)},
		rule{"internal/", []string{"fw/methods"}},
		rule{"examples", []string{"internal/", "cmd/"}},
	)
}

// publicContractViolations lists the fwlab packages that the package fw
// imports: its exported API must show its own types only.
func publicContractViolations(byPkg map[string][]string) []string {
	var out []string
	for _, im := range byPkg["fw"] {
		if strings.HasPrefix(im, module) {
			out = append(out, "fw imports "+strings.TrimPrefix(im, module))
		}
	}
	return out
}

func TestPublicContractStandsAlone(t *testing.T) {
	byPkg := imports(t, moduleRoot)
	if len(byPkg["fw"]) == 0 {
		t.Fatal("the package fw was not found (or imports nothing at all)")
	}
	for _, v := range publicContractViolations(byPkg) {
		t.Error(v)
	}
}

// The public packages' rules catch planted imports.
func TestPublicRulesCatchPlantedImports(t *testing.T) {
	for _, tc := range []struct{ pkg, imp string }{
		{"fw/methods", module + "internal/scenarios"},
		{"fw/methods", module + "internal/store"},
		{"fw/methods", "net/http"},
		{"internal/solver", module + "fw/methods"},
		{"examples/birkhoff", module + "internal/solver"},
	} {
		if got := violations(map[string][]string{tc.pkg: {tc.imp}}); len(got) == 0 {
			t.Errorf("%s importing %s: no rule broken, want one", tc.pkg, tc.imp)
		}
	}
	for _, tc := range []struct{ pkg, imp string }{
		{"fw/methods", module + "internal/solver"},
		{"fw/methods", module + "fw"},
		{"internal/solver", module + "fw"},
		{"examples/matrixcompletion", module + "fw/methods"},
	} {
		if got := violations(map[string][]string{tc.pkg: {tc.imp}}); len(got) != 0 {
			t.Errorf("%s importing %s is allowed, got %v", tc.pkg, tc.imp, got)
		}
	}
	if got := publicContractViolations(map[string][]string{"fw": {"math", module + "internal/solver"}}); len(got) != 1 {
		t.Errorf("fw importing internal/solver: got %v, want one violation", got)
	}
}
