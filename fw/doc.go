// Package fw is fwlab's public contract for a problem that its Frank-Wolfe
// methods solve, and for the records they report.
//
// A problem is the paper's (P1): minimise F(x) = (1/n) Σ_i f_i(a_iᵀx) + <b, x>
// over a polytope P = P_1 × … × P_q, a product of one or more blocks. The
// user gives it as a [Problem]: its dimension and blocks, a linear
// minimization oracle per block that returns a [Vertex] with a stable
// identity (its Key), a starting vertex, the objective, and a [Model], the
// incremental state behind the gradient (full or on a batch of samples, for
// the semi-stochastic methods) and the restriction of F to a segment (a
// [Line], for the step-size rules). Optional interfaces add what a method
// can use when the problem offers it: a Lipschitz bound ([LipschitzBounder]),
// extra metrics ([Evaluator]), an oracle that can fail ([CheckedOracle]),
// blocks that are coupled ([CoupledBlocks]) or separable
// ([SeparableBlocks]), and work split over workers ([SplitOracle],
// [SplitModel], [SyncModel]). The proximal baselines see a problem through
// [ProxProblem].
//
// Every method reports one [Record] per iteration to a [Recorder], the same
// records the dashboard stores and draws, and ends with a [Summary] whose
// Status is one of the Status constants.
//
// The methods themselves (ssfw-as, afw, pfw, fw, bc-ssfw-as, bcfw, with
// their step rules and batch schedules) run on such a problem through the
// package github.com/fwlab/fwlab/fw/methods. fwlab's own catalogue of
// problems is built on this same contract.
//
// # Compatibility
//
// This package and fw/methods follow semantic versioning with fwlab's
// release tags from v1.0.0: within a major version, exported names are not
// removed or changed in meaning, a Record's fields and their JSON names
// stay, and an interface a user implements gets no new method (new
// capabilities arrive as new optional interfaces). docs/library.md says
// more.
package fw
