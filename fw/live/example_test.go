package live_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"net/http/httptest"
	"os"

	"github.com/fwlab/fwlab/fw/live"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/solver"
)

// Projected gradient descent on a small least-squares problem over the
// box [0, 1]², logged live to a dashboard (here one started for the
// example; with `dashboard serve` running, use "http://localhost:8080").
func Example() {
	dir, _ := os.MkdirTemp("", "fwlab-example")
	defer os.RemoveAll(dir)
	srv, err := server.New(server.Options{UploadDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer srv.Close()
	defer ts.Close()

	// minimise f(x) = ½‖Ax − b‖² over 0 ≤ x ≤ 1; the unconstrained
	// minimiser (1, 2) projects to the optimum x* = (1, 1), f* = ½
	A := [2][2]float64{{1, 0}, {0, 1}}
	b := [2]float64{1, 2}
	fstar := 0.5
	run, err := live.Open(context.Background(), ts.URL, live.RunInfo{
		Problem: "box least squares", Traces: []string{"pgd"}, FStar: &fstar, Iters: 100})
	if err != nil {
		log.Fatal(err)
	}
	x := [2]float64{0, 0}
	for k := 0; k <= 100; k++ {
		var g [2]float64 // ∇f = Aᵀ(Ax − b)
		var f float64
		for i := range 2 {
			r := A[i][0]*x[0] + A[i][1]*x[1] - b[i]
			f += r * r / 2
			g[0] += A[i][0] * r
			g[1] += A[i][1] * r
		}
		// the Frank-Wolfe gap over the box: ⟨∇f, x − s⟩, s the box's
		// vertex minimising ⟨∇f, s⟩
		gap := 0.0
		for i := range 2 {
			s := 0.0
			if g[i] < 0 {
				s = 1
			}
			gap += g[i] * (x[i] - s)
		}
		if err := run.Record("pgd", solver.Record{K: k, Passes: float64(k), Step: "pgd", Gamma: 0.5, Active: 1,
			Objective: &f, Gap: &gap}); err != nil {
			log.Fatal(err)
		}
		if gap <= 1e-9 {
			break
		}
		for i := range 2 { // a step of 1/L (L = 2 here), then the projection
			x[i] = math.Min(1, math.Max(0, x[i]-0.5*g[i]))
		}
	}
	if err := run.End(solver.StatusConverged); err != nil {
		log.Fatal(err)
	}
	st, _ := srv.Manager().Store().Get(context.Background(), run.ID)
	fmt.Printf("%s %v %d %.6f\n", st.Status, st.Outside, st.Traces[0].Records, st.Traces[0].Summary.Objective)
	// Output: done true 16 0.500000
}
