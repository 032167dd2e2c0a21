package main

import (
	"fmt"
	"io"
)

// runServe starts the web dashboard.
func runServe(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dashboard: the server is not built yet")
	return 1
}
