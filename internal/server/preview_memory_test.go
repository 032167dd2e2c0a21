package server

import (
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
)

// TestPreviewMemory: the preview answers what a run's instance counts in
// the memory budget, and refuses, without building it, an instance whose
// expected size (known from its parameters) exceeds the budget, naming the
// budget and its flag.
func TestPreviewMemory(t *testing.T) {
	srv, ts := newTestServer(t, Options{Session: session.Options{MaxMemory: 64 << 20, Flags: map[string]string{"MaxMemory": "-mem"}}})
	code, _, raw := preview(t, ts.URL, `{"problem":"simplex","params":{"p":"30","samples":"200"}}`)
	if code != 200 || raw["memory_bytes"] != float64(16*30*200+64<<10) {
		t.Fatalf("simplex 30×200: %d %v", code, raw)
	}
	before := srv.previews.Builds()
	code, a, _ := preview(t, ts.URL, `{"problem":"l1ball","params":{"p":"2000","samples":"10000"}}`)
	if code != 400 || a.Field != "params" || !strings.Contains(a.Error, "about 305 MiB") || !strings.Contains(a.Error, "memory budget of 64 MiB (-mem)") {
		t.Fatalf("l1ball 2000×10⁴ under a 64 MiB budget: %d %+v", code, a)
	}
	if srv.previews.Builds() != before {
		t.Fatal("the instance over the budget was built")
	}
}
