//go:build algos_extra

package spec

// A test build (-tags algos_extra) adds one algorithm to the table: afw's
// row under another name, with other step-size rules and blockwise, so
// that a test can show that what reads the table (the API's catalogue and
// the start page) follows it. The row is appended while the package's
// variables initialise, before those derived from the table (AlgoNames,
// NotInPaper: declared in later files) and before any other package reads
// it.
var _ = func() bool {
	Algorithms = append(Algorithms, Algorithm{Name: "afw-extra", Family: "fw", Groups: []string{"toy", "model"},
		Stepsizes: []string{"curvature", "short"}, Stepsize: "short", Blockwise: true, Reshape: true, TakesL: true})
	return true
}()
