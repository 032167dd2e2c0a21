package sweep_test

import (
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/sweep"
)

func TestSafeCSV(t *testing.T) {
	in := []string{"=HYPERLINK(\"x\")", "+1+2", "-3", "-cmd", "@SUM(A1)", "\tx", "\rx", "1e-6", "+4", "auto", "", "a=b"}
	want := []string{"'=HYPERLINK(\"x\")", "'+1+2", "-3", "'-cmd", "'@SUM(A1)", "'\tx", "'\rx", "1e-6", "+4", "auto", "", "a=b"}
	got := sweep.SafeCSV(append([]string(nil), in...))
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("SafeCSV\n got %q\nwant %q", got, want)
	}
}
