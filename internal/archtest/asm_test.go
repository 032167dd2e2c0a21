package archtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The assembly kernels' rule (ARCHITECTURE.md, "internal/archtest"): a
// function that uses the 256-bit registers (Y0–Y15) uses only VEX-encoded
// instructions (V…) on the vector registers, and clears the upper halves
// (VZEROUPPER) before every RET. A legacy SSE instruction (MOVQ R9, X12,
// say) while the upper halves hold data costs a state transition on many
// CPUs, and under some hypervisors about a hundred nanoseconds each: one
// such MOVQ per relaxation made OCR's Viterbi twenty times slower than
// its arithmetic. Go's own code after the call uses SSE, hence VZEROUPPER.

var (
	ymmReg = regexp.MustCompile(`\bY(1[0-5]|[0-9])\b`)
	xmmReg = regexp.MustCompile(`\bX(1[0-5]|[0-9])\b`)
)

// asmFunc is one TEXT block of an assembly file: its name and its
// instructions with their line numbers (comments and labels dropped).
type asmFunc struct {
	name  string
	lines []int
	ins   []string
}

// parseAsm splits an assembly source into its TEXT blocks.
func parseAsm(src string) []asmFunc {
	var out []asmFunc
	for i, l := range strings.Split(src, "\n") {
		s := strings.TrimSpace(l)
		if k := strings.Index(s, "//"); k >= 0 {
			s = strings.TrimSpace(s[:k])
		}
		switch {
		case strings.HasPrefix(s, "TEXT"):
			f := strings.Fields(s)
			name := ""
			if len(f) > 1 {
				name = strings.TrimSuffix(f[1], ",")
			}
			out = append(out, asmFunc{name: name})
		case s == "" || strings.HasSuffix(s, ":") || len(out) == 0 || strings.HasPrefix(s, "#"):
		default:
			out[len(out)-1].lines = append(out[len(out)-1].lines, i+1)
			out[len(out)-1].ins = append(out[len(out)-1].ins, s)
		}
	}
	return out
}

// vectorRuleViolations lists, for one assembly source, each legacy SSE
// instruction in a function that uses Y registers and each RET of such a
// function not preceded by VZEROUPPER.
func vectorRuleViolations(file, src string) []string {
	var out []string
	for _, f := range parseAsm(src) {
		wide := false
		for _, s := range f.ins {
			if ymmReg.MatchString(s) {
				wide = true
				break
			}
		}
		if !wide {
			continue
		}
		for i, s := range f.ins {
			op := strings.Fields(s)[0]
			switch {
			case op == "RET" && (i == 0 || f.ins[i-1] != "VZEROUPPER"):
				out = append(out, fmt.Sprintf("%s:%d: %s returns without VZEROUPPER", file, f.lines[i], f.name))
			case !strings.HasPrefix(op, "V") && (xmmReg.MatchString(s) || ymmReg.MatchString(s)):
				out = append(out, fmt.Sprintf("%s:%d: %s mixes the legacy SSE instruction %q with 256-bit code (use its VEX form)", file, f.lines[i], f.name, s))
			}
		}
	}
	return out
}

// TestVectorKernelsStayVEX holds every assembly file of the module to
// the rule above.
func TestVectorKernelsStayVEX(t *testing.T) {
	root := moduleRoot
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "vendor" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".s") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, v := range vectorRuleViolations(rel, string(b)) {
			t.Error(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no assembly file found: the walk is broken")
	}
}

// TestVectorRuleCatchesPlantedMix plants each kind of violation in a
// kernel of the house style and checks that each is reported, and that the
// SSE2 kernels (no Y register) and clean 256-bit kernels pass.
func TestVectorRuleCatchesPlantedMix(t *testing.T) {
	clean := `#include "textflag.h"

// func k(p *[4]float64, j int)
TEXT ·k(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ j+8(FP), R9
	VMOVQ R9, X12 // a comment with MOVQ R9, X12
	VPBROADCASTQ X12, Y12
	VMOVDQU Y12, 0(SI)
	TESTQ R9, R9
	JZ done
	VZEROUPPER
	RET
done:
	VZEROUPPER
	RET

TEXT ·sse(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), SI
	MOVSD (SI), X0
	ADDSD X0, X0
	MOVSD X0, (SI)
	RET
`
	if v := vectorRuleViolations("clean.s", clean); len(v) != 0 {
		t.Fatalf("clean kernels reported: %q", v)
	}
	planted := []struct{ name, from, to, want string }{
		{"legacy MOVQ to X", "VMOVQ R9, X12 //", "MOVQ R9, X12 //", "legacy SSE instruction \"MOVQ R9, X12\""},
		{"legacy move of a Y register", "VMOVDQU Y12, 0(SI)", "MOVOU Y12, 0(SI)", "legacy SSE instruction \"MOVOU Y12, 0(SI)\""},
		{"legacy arithmetic", "TESTQ R9, R9", "ADDPD X1, X2\n\tTESTQ R9, R9", "\"ADDPD X1, X2\""},
		{"RET without VZEROUPPER", "JZ done\n\tVZEROUPPER\n\tRET", "JZ done\n\tRET", "returns without VZEROUPPER"},
		{"RET after a label without VZEROUPPER", "done:\n\tVZEROUPPER\n\tRET", "done:\n\tRET", "returns without VZEROUPPER"},
	}
	for _, p := range planted {
		src := strings.Replace(clean, p.from, p.to, 1)
		if src == clean {
			t.Fatalf("%s: the plant did not apply", p.name)
		}
		v := vectorRuleViolations("planted.s", src)
		if len(v) != 1 || !strings.Contains(v[0], p.want) || !strings.Contains(v[0], "·k") {
			t.Errorf("%s: got %q, want one report naming ·k and %q", p.name, v, p.want)
		}
	}
}
