package e2e

import (
	"os"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
)

// TestMain runs the tests, then removes the PostgreSQL cluster, the
// browser and the dashboard binary they shared, if any test started them.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	stopChromium()
	removeBuilt()
	os.Exit(code)
}
