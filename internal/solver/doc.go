// Package solver holds fwlab's optimisation core on the public problem
// contract of package fw (whose types it names by aliases): active sets
// with the vertex representation update (Algorithm 2), batch schedules,
// step-size rules, and the algorithms (semi-stochastic away-step
// Frank-Wolfe, its block-coordinate version, away-step, pairwise and
// vanilla Frank-Wolfe, the proximal gradient baselines and coordinate
// descent). Every algorithm emits one Record per iteration to a Recorder.
// The package knows nothing of HTTP, sessions or JSON files; users outside
// the module reach it through fw/methods.
package solver
