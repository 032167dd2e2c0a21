package solver

// CheckedOracle is an optional extension of Problem whose oracle can fail
// (a linear program that does not solve). For a step, Problem.LMO may fall
// back to a feasible vertex that is not the minimiser; a duality-gap
// evaluation must not, since its gap would then be no certificate: it calls
// CheckedLMO, and a failure fails the evaluation, and the run, with the
// oracle's message.
type CheckedOracle interface {
	// CheckedLMO is LMO, or the reason it could not find the minimiser.
	CheckedLMO(b int, g []float64) (Vertex, error)
}

// evalOracle is the oracle of a gap evaluation: CheckedLMO when the problem
// has it, else LMO.
func evalOracle(p Problem, b int, g []float64) (Vertex, error) {
	if c, ok := p.(CheckedOracle); ok {
		return c.CheckedLMO(b, g)
	}
	return p.LMO(b, g), nil
}
