package toy

// EvalCost is what one evaluation of a least-squares iterate costs in
// passes, for the default cadence (solver.EvalCoster): the objective, summed
// row by row from scratch, takes about four passes of the BLAS gradient an
// iteration computes, and the FW gap's exact gradient one more.
func (d *lsq) EvalCost() float64 { return 6 }
