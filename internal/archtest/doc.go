// Package archtest holds the tests of fwlab's code map (ARCHITECTURE.md):
// which packages each package must never import, and how long a function
// and a file may be. It has no code of its own.
package archtest
