package solver

// EvalRequester is a Recorder that may ask for an iteration to be evaluated
// (objective, gap and the problem's metrics) whatever the cadence: the
// dashboard's session asks for every iteration of a paused run that the
// user steps through one at a time, so that each step shows F and the gap.
type EvalRequester interface {
	Recorder
	// EvalNext reports whether the iteration being computed must be
	// evaluated. Methods ask it once per iteration, where they ask their
	// Cadence.
	EvalNext() bool
}

// EvalRequested reports whether rec, when it is an EvalRequester, asks for
// the iteration being computed to be evaluated. Methods pass it to their
// Cadence as a forced evaluation.
func EvalRequested(rec Recorder) bool {
	r, ok := rec.(EvalRequester)
	return ok && r.EvalNext()
}
