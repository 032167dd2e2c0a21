package glm_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/problems/glm"
)

// A LASSO in P1 form: x = (β, t), vertices 0 and T·(±e_j, 1).
func Example() {
	X := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 1, 1})
	pr, err := glm.New(glm.Config{Loss: glm.Squared, X: X, Y: []float64{1, 2, 3}, Lambda: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("dim", pr.Dim(), "samples", pr.Samples(), "safe T", pr.T())
	x := make([]float64, pr.Dim()) // β = 0, t = 0
	g := make([]float64, pr.Dim())
	pr.NewModel(x).Gradient(0, g, x, nil)
	fmt.Println("gradient", g)
	v := pr.LMO(0, g)
	fmt.Println("FW vertex", v.Key, v.Idx, v.Val)
	fmt.Println("objective at 0", pr.Objective(x))
	// Output:
	// dim 3 samples 3 safe T 7
	// gradient [-4 -5 1]
	// FW vertex +1 [1 2] [7 7]
	// objective at 0 7
}
