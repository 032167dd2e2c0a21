package recordfields

import (
	"os"
	"testing"
)

// fw/live's queued record is the one `go generate` writes from the
// declaration: regenerating changes nothing. A test build that adds a
// field checks its own file (LiveExtraFile), written by the generator built
// with the tag.
func TestLiveRecordIsCurrent(t *testing.T) {
	got, err := os.ReadFile("../../" + LiveRecordFile())
	if err != nil {
		t.Fatal(err)
	}
	want, err := LiveRecord()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not what the declaration generates: run go generate ./internal/recordfields", LiveRecordFile())
	}
}
