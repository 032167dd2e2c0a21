package fw

// Step kinds reported in Record.Step.
const (
	StepFW       = "fw"            // Frank-Wolfe step toward the oracle's vertex
	StepAway     = "away"          // away step from an active vertex
	StepDrop     = "drop"          // away step with γ = γ_max: the vertex leaves the active set
	StepCollapse = "full-collapse" // FW step with γ = 1: the active set collapses to one vertex
	StepPairwise = "pairwise"      // pairwise step (weight moved from u to p)
	StepProx     = "prox"          // proximal-gradient step
	StepBlock    = "block"         // block-coordinate iteration (several block steps)
	StepNone     = "none"          // no move (zero direction or zero step)
)

// Record is what every algorithm reports once per iteration (ARCHITECTURE.md, "Records").
// K is the iteration; Passes the effective passes over the data so far (work
// in units of one full gradient, evaluation work not counted); Time the
// method's work in seconds; Step the kind of step (the Step constants);
// Gamma its step size (the mean over the blocks that moved, on a block
// iteration); Batch the number of samples m_k the gradient was estimated
// on; Active the number of active vertices over all blocks (the support's
// size for the proximal methods).
// Objective, Gap and GradErr are set on evaluation iterations only. Every
// method first reports its starting point as an evaluated record with K = 0
// and Step "none"; record k ≥ 1 describes the step of iteration k and, when
// evaluated, the iterate after it. On single steps FWSteps, AwaySteps and
// Drops count that one step (1 or 0), on block iterations all block steps.
// Time is the method's own work in seconds: neither evaluations nor the
// time spent inside the Recorder (where a session may hold a paused trace)
// are counted.
type Record struct {
	K      int     `json:"k"`
	Passes float64 `json:"passes"`
	Time   float64 `json:"time_s"`
	Step   string  `json:"step"`
	Gamma  float64 `json:"gamma"`
	Batch  int     `json:"batch"`
	Active int     `json:"active"`
	// Step counts of a block iteration (Step == StepBlock); Drops is also 1 on
	// a single drop step so that charts can mark drop events uniformly.
	FWSteps   int `json:"fw_steps,omitempty"`
	AwaySteps int `json:"away_steps,omitempty"`
	Drops     int `json:"drops,omitempty"`
	// Weight clean-ups (weights below tolerance zeroed) done this iteration.
	Cleanups  int      `json:"cleanups,omitempty"`
	Objective *float64 `json:"objective"`
	Gap       *float64 `json:"gap"`
	GradErr   *float64 `json:"grad_err,omitempty"`
	// Extra holds problem-specific metrics on evaluation iterations (for the
	// structural SVM: dual objective, relative gap, train/test error, …).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// Evaluated reports whether the record carries the exact objective.
func (r *Record) Evaluated() bool { return r.Objective != nil }

// F returns a pointer to v, for the optional Record fields.
func F(v float64) *float64 { return &v }

// Recorder receives the records of one run, in order, from the goroutine
// running the method. It must not block for long: the session layer copies
// records into a store and notifies subscribers asynchronously.
type Recorder interface {
	Record(Record)
}

// RecorderFunc adapts a function to the Recorder interface.
type RecorderFunc func(Record)

// Record calls f(r).
func (f RecorderFunc) Record(r Record) { f(r) }

// Run statuses reported in Summary.Status.
const (
	StatusConverged = "converged"  // the gap tolerance was reached, a certified stationary point, or a gap at the rounding floor
	StatusStalled   = "stalled"    // no step made progress although the gap is far above the rounding floor
	StatusMaxIters  = "max_iters"  // the iteration limit was reached
	StatusMaxPasses = "max_passes" // the effective-pass limit was reached
	StatusCancelled = "cancelled"  // the context was cancelled
	StatusFailed    = "failed"     // a numerical failure (message says which)
)

// Summary closes a run: the objective and gap at the last iterate, the
// iterations, passes and seconds of work done, the status (one of the
// Status constants) and a message that says why the run ended.
type Summary struct {
	Objective float64 `json:"objective"`
	Gap       float64 `json:"gap"`
	Iters     int     `json:"iters"`
	Passes    float64 `json:"passes"`
	Time      float64 `json:"time_s"`
	Status    string  `json:"status"`
	Message   string  `json:"message"`
}

// IterateRecorder is an optional extension of Recorder for a user who wants
// to see the iterate and its vertex representation (the (U, μ) of the
// paper's Algorithm 2), not only the records: the Frank-Wolfe methods call
// Iterate before each Record, with the record's K, the iterate x and, for
// each block b, its active vertices and their weights, so that
// x_b = Σ_i weights[b][i]·vertices[b][i]. The slices are the method's own:
// read them during the call only, never keep or change them. The time
// spent in Iterate is not counted in Record.Time.
type IterateRecorder interface {
	Recorder
	// Iterate shows iteration k's iterate x and vertex representation.
	Iterate(k int, x []float64, vertices [][]Vertex, weights [][]float64)
}
