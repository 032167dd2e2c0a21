package verify

import (
	"errors"

	"github.com/fwlab/fwlab/internal/spec"
)

// ErrOutside says that a run opened from outside (docs/live.md) cannot be
// re-run: its records came from a program fwlab does not run. Its bundle's
// digest is all there is to check.
var ErrOutside = errors.New("opened from outside: its records came from the program that logged it, which fwlab cannot re-run; only a bundle's digest can be checked")

// Rerunnable returns ErrOutside for the spec of a run opened from outside,
// nil for any other.
func Rerunnable(sp spec.Run) error {
	if sp.Outside {
		return ErrOutside
	}
	return nil
}
