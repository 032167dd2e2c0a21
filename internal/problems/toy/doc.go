// Package toy holds fwlab's small teaching problems: a strongly convex
// quadratic over a 2-D convex polygon (the classic zig-zag demonstration of
// vanilla Frank-Wolfe), and least-squares objectives over the probability
// simplex, an l1 ball and a box in R^p.
//
// Every problem is one block of the solver's P1 contract with an exact,
// deterministic linear minimisation oracle over its vertices, an incremental
// Model, exact quadratic line restrictions, a Lipschitz bound, and a
// proximal view (Euclidean projection onto the polytope) for the proximal
// gradient baselines. Each instance knows its exact optimum: the polygon by
// a brute-force Q-metric projection, the least-squares problems by
// construction (the data are generated around a chosen optimum on a face,
// with strict complementarity).
package toy
