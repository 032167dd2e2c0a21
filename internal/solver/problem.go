package solver

import "github.com/fwlab/fwlab/fw"

// The problem contract is the public package fw's; the solver's names for
// it are aliases, so that the catalogue's problems and a user's are the
// same kind of thing.
type (
	// Vertex is an extreme point of a block's polytope with a stable key.
	Vertex = fw.Vertex
	// Block is a contiguous range of the variable with its own polytope.
	Block = fw.Block
	// Problem is the paper's (P1).
	Problem = fw.Problem
	// Model is a problem's incremental state for the current iterate.
	Model = fw.Model
	// LineMagnitude is implemented by Lines whose Delta rounds with φ(0).
	LineMagnitude = fw.LineMagnitude
	// Term is one weighted vertex in a Direction.
	Term = fw.Term
	// Direction is a direction within one block.
	Direction = fw.Direction
	// Line is F restricted to a segment.
	Line = fw.Line
	// ProxProblem is the proximal methods' view of a problem.
	ProxProblem = fw.ProxProblem
	// Parallel runs a block step's work in parts.
	Parallel = fw.Parallel
	// SplitOracle is a Problem whose oracle splits its work.
	SplitOracle = fw.SplitOracle
	// SplitModel is a Model whose block updates split their work.
	SplitModel = fw.SplitModel
	// SeparableBlocks is implemented by problems with separable blocks.
	SeparableBlocks = fw.SeparableBlocks
	// LipschitzBounder is implemented by problems that know L.
	LipschitzBounder = fw.LipschitzBounder
	// Evaluator is implemented by problems with extra metrics.
	Evaluator = fw.Evaluator
	// CoupledBlocks is implemented by problems with coupled blocks.
	CoupledBlocks = fw.CoupledBlocks
	// SyncModel is implemented by models that defer shared updates.
	SyncModel = fw.SyncModel
	// CheckedOracle is implemented by problems whose oracle can fail.
	CheckedOracle = fw.CheckedOracle
	// IterateRecorder is a Recorder that sees the vertex representation.
	IterateRecorder = fw.IterateRecorder
)

// DenseVertex builds a vertex from dense coordinates, keeping the nonzeros.
func DenseVertex(key string, x []float64) Vertex { return fw.DenseVertex(key, x) }

// AppendJSONFloat appends a finite f as encoding/json writes a float64.
func AppendJSONFloat(b []byte, f float64) []byte { return fw.AppendJSONFloat(b, f) }

// AppendJSONMetrics appends m's finite values as a JSON object with sorted keys.
func AppendJSONMetrics(b []byte, m map[string]float64) []byte { return fw.AppendJSONMetrics(b, m) }
