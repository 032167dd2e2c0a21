package toy_test

import (
	"fmt"

	"github.com/fwlab/fwlab/internal/problems/toy"
)

// A rectangle given as points (the interior point is dropped by the hull),
// with the centre of an isotropic quadratic placed to its right: the optimum
// is the centre's projection onto the right edge. At the optimum the
// gradient (-1, 0) ties between the edge's two vertices and the LMO picks the
// first in counter-clockwise order.
func ExampleNewPolygon() {
	pg, err := toy.NewPolygon(toy.PolygonConfig{
		Points:  "0,0; 2,0; 2,1; 0,1; 1,0.5",
		Target:  toy.TargetCustom,
		CX:      3,
		CY:      0.5,
		Cond:    1,
		Samples: 1,
	}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("vertices:", pg.Vertices())
	xs := pg.XStar()
	fmt.Printf("x* = (%.3f, %.3f), F* = %.3f\n", xs[0], xs[1], pg.FStar())
	g := make([]float64, 2)
	pg.Smooth(xs, g)
	fmt.Println("FW vertex at x*:", pg.LMO(0, g).Key)

	_, err = toy.NewPolygon(toy.PolygonConfig{Points: "0,0; 1,1; 2,2", Target: toy.TargetEdge, Cond: 1, Samples: 1}, 1)
	fmt.Println(err)
	// Output:
	// vertices: [[0 0] [2 0] [2 1] [0 1]]
	// x* = (2.000, 0.500), F* = 0.500
	// FW vertex at x*: v1
	// points: the points are all collinear (or coincide): their convex hull has no area
}
