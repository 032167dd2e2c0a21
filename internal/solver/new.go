package solver

import "fmt"

// New configures a Frank-Wolfe-type algorithm (ssfw-as, afw, pfw, fw,
// bc-ssfw-as, bcfw) on p.
func New(p Problem, cfg Config) (Method, error) {
	return nil, fmt.Errorf("solver: algorithm %q is not available yet", cfg.Algorithm)
}

// NewProx configures a proximal-gradient method (fista, pgd) on pp; lift is
// the P1 problem used to report the objective and the FW gap of its iterates.
func NewProx(pp ProxProblem, lift Problem, cfg Config) (Method, error) {
	return nil, fmt.Errorf("solver: algorithm %q is not available yet", cfg.Algorithm)
}
