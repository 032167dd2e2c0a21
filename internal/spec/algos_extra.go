//go:build algos_extra

package spec

// A test build (-tags algos_extra) adds one algorithm to the table: afw's
// row under another name, with other step-size rules and blockwise (away
// steps on r sampled blocks), so that the tests can show that what reads
// the table follows it with no other edit: the spec, the solver's
// constructor (the row's Runs), solve, the API, its catalogue and the
// start and run pages. The row is appended while the package's
// variables initialise, before those derived from the table (AlgoNames,
// NotInPaper: declared in later files) and before any other package reads
// it.
var _ = func() bool {
	Algorithms = append(Algorithms, Algorithm{Name: "afw-extra", Family: "fw", Runs: Runs{Method: "away", Blockwise: true, Reshape: true},
		Groups: []string{"toy", "model"}, Stepsizes: []string{"curvature", "short"}, Stepsize: "short", TakesL: true})
	return true
}()
