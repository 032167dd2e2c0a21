package main

import (
	"fmt"
	"io"
)

// runSolve runs one solver headless.
func runSolve(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dashboard solve: not built yet")
	return 1
}
