package solver

// evalOracle is the oracle of a gap evaluation: CheckedLMO when the problem
// has it, else LMO.
func evalOracle(p Problem, b int, g []float64) (Vertex, error) {
	if c, ok := p.(CheckedOracle); ok {
		return c.CheckedLMO(b, g)
	}
	return p.LMO(b, g), nil
}
