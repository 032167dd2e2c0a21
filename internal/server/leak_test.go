package server

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of the package leaves no goroutine behind: runs, cancels,
// disconnects, uploads and Close all wait for what they started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
