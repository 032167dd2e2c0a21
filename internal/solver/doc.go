// Package solver holds fwlab's optimisation core: the problem contract of the
// paper's (P1), vertices with a stable identity, active sets with the vertex
// representation update (Algorithm 2), batch schedules, step-size rules, and the
// algorithms (semi-stochastic away-step Frank-Wolfe, its block-coordinate
// version, away-step, pairwise and vanilla Frank-Wolfe, and the proximal
// gradient baselines). Every algorithm emits one Record per iteration to a
// Recorder. The package knows nothing of HTTP, sessions or JSON files.
package solver
