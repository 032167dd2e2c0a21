package loadtest

import (
	"context"
	"testing"
	"time"
)

// A small load (a dozen clients) passes every check of the full one.
func TestSmallLoad(t *testing.T) {
	rep, err := Run(context.Background(), Config{Clients: 12, Iters: 3000, DisconnectEvery: 3, CancelEvery: 4, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.String())
	if !rep.OK() {
		t.Fatalf("checks failed:\n%s", rep)
	}
	n := 0
	for _, c := range rep.Statuses {
		n += c
	}
	if n != 12 || rep.TracesChecked == 0 || rep.Requests < 36 {
		t.Errorf("%d runs, %d traces checked, %d requests", n, rep.TracesChecked, rep.Requests)
	}
}
