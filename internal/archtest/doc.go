// Package archtest holds the tests of fwlab's code map (ARCHITECTURE.md):
// which packages each package must never import, how long a function
// and a file may be, and how the assembly kernels use the vector
// registers. It has no code of its own.
package archtest
