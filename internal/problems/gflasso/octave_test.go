package gflasso

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

// TestWriteOctaveInput writes the ten-times instance (tenX) and spg's
// parameters in the form docs/octave/spg_iteration.m reads — X.txt, Y.txt,
// E.txt (m l w sign a line, tasks from 1) and params.txt (λ γ μ L) — into
// $FWLAB_OCTAVE_DIR (a temporary directory when unset), reads them back and
// checks that they give the same instance and that SPG's first iterations
// from the files, with C built as the script builds it, give spg's F:
//
//	FWLAB_OCTAVE_DIR=/tmp/spg go test -count=1 -run TestWriteOctaveInput ./internal/problems/gflasso
func TestWriteOctaveInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ten-times instance")
	}
	dir := os.Getenv("FWLAB_OCTAVE_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := tenX(t)
	s, err := NewSPG(p, SPGConfig{Limits: solver.Limits{MaxIters: 1}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, rows [][]float64) {
		t.Helper()
		var b strings.Builder
		for _, r := range rows {
			for i, v := range r {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	matrix := func(d []float64, r, c int) [][]float64 {
		out := make([][]float64, r)
		for i := range out {
			out[i] = d[i*c : (i+1)*c]
		}
		return out
	}
	var edges [][]float64
	for _, e := range p.graph.Edges {
		edges = append(edges, []float64{float64(e.M + 1), float64(e.L + 1), e.W, float64(e.Sign)})
	}
	write("X.txt", matrix(p.x, p.N, p.J))
	write("Y.txt", matrix(p.y, p.N, p.K))
	write("E.txt", edges)
	write("params.txt", [][]float64{{p.opt.Lambda, p.opt.Gamma, s.mu, s.L}})

	read := func(name string) [][]float64 {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var rows [][]float64
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r []float64
			for _, w := range strings.Fields(sc.Text()) {
				v, err := strconv.ParseFloat(w, 64)
				if err != nil {
					t.Fatalf("%s line %d: %v", name, len(rows)+1, err)
				}
				r = append(r, v)
			}
			rows = append(rows, r)
		}
		return rows
	}
	flat := func(rows [][]float64) []float64 {
		var d []float64
		for _, r := range rows {
			d = append(d, r...)
		}
		return d
	}
	X, Y, E, P := read("X.txt"), read("Y.txt"), read("E.txt"), read("params.txt")
	if len(X) != p.N || len(X[0]) != p.J || len(Y) != p.N || len(Y[0]) != p.K || len(E) != len(p.graph.Edges) {
		t.Fatalf("read back %d×%d X, %d×%d Y, %d edges", len(X), len(X[0]), len(Y), len(Y[0]), len(E))
	}
	q, err := New(mat.NewDense(p.N, p.J, flat(X)), mat.NewDense(p.N, p.K, flat(Y)), p.opt)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(q.graph.Edges) != fmt.Sprint(p.graph.Edges) {
		t.Fatal("the instance read back has another graph")
	}
	// SPG from the files as the script runs it: C from E.txt, dense
	// products, clip, soft-threshold, momentum.
	lambda, gamma, mu, L := P[0][0], P[0][1], P[0][2], P[0][3]
	xm, ym := mat.NewDense(p.N, p.J, flat(X)), mat.NewDense(p.N, p.K, flat(Y))
	C := mat.NewDense(len(E), p.K, nil)
	for i, e := range E {
		C.Set(i, int(e[0])-1, gamma*e[2])
		C.Set(i, int(e[1])-1, -gamma*e[3]*e[2])
	}
	var xx, xy mat.Dense
	xx.Mul(xm.T(), xm)
	xy.Mul(xm.T(), ym)
	B, W := mat.NewDense(p.J, p.K, nil), mat.NewDense(p.J, p.K, nil)
	theta := 1.0
	st := s.newState()
	for it := 1; it <= 10; it++ {
		var A, G, AC mat.Dense
		A.Mul(C, W.T())
		A.Apply(func(_, _ int, v float64) float64 { return math.Max(-1, math.Min(1, v/mu)) }, &A)
		G.Mul(&xx, W)
		G.Sub(&G, &xy)
		AC.Mul(A.T(), C)
		G.Add(&G, &AC)
		Bn := mat.NewDense(p.J, p.K, nil)
		Bn.Apply(func(i, j int, w float64) float64 {
			v := w - G.At(i, j)/L
			return math.Copysign(math.Max(0, math.Abs(v)-lambda/L), v)
		}, W)
		thn := 2 / float64(it+2)
		var d mat.Dense
		d.Sub(Bn, B)
		d.Scale((1-theta)/theta*thn, &d)
		W.Add(Bn, &d)
		B, theta = Bn, thn
		s.step(st)
	}
	fScript, fSPG := p.F(B), p.F(mat.NewDense(p.J, p.K, st.B))
	if math.Abs(fScript-fSPG) > 1e-10*fSPG {
		t.Errorf("F after 10 iterations: %.15g from the files as the script computes it, %.15g from spg", fScript, fSPG)
	}
	t.Logf("wrote %s (F after 10 spg iterations: %.12g)", dir, fSPG)
}
