package solver
