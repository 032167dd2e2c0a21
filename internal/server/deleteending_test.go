package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// endHeld is a store whose EndRun waits until release is closed: a run's
// traces have ended (it shows done) while its end is not yet written.
type endHeld struct {
	store.Backend
	release chan struct{}
}

func (s endHeld) EndRun(ctx context.Context, id string, end store.Ending) error {
	<-s.release
	return s.Backend.EndRun(ctx, id, end)
}

// A run that shows done while it writes its end is deleted once it has
// written it (the request waits, EndingWait at most), not refused as a
// live run to cancel.
func TestDeleteWaitsForARunWritingItsEnd(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held := endHeld{Backend: st, release: make(chan struct{})}
	srv, ts := newTestServer(t, Options{Session: session.Options{Store: held}})
	id := create(t, ts, fakeRun(50, "fw"))
	deadline := time.Now().Add(time.Minute)
	for {
		_, body := do(t, "GET", ts.URL+"/api/runs/"+id, nil)
		var s struct{ Status string }
		_ = json.Unmarshal(body, &s)
		if s.Status == session.StatusDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never showed done: %s", body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r, ok := srv.Manager().Live(id); !ok || !r.Ending() {
		t.Fatal("the run that shows done is not live and writing its end")
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		close(held.release)
	}()
	t0 := time.Now()
	code, body := do(t, "POST", ts.URL+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{id}}))
	if code != 200 || !strings.Contains(string(body), `"deleted":1`) {
		t.Fatalf("deleting a run that shows done while it writes its end: %d %s", code, body)
	}
	if waited := time.Since(t0); waited < 250*time.Millisecond {
		t.Errorf("the delete answered after %v, before the run's end was written", waited)
	}
	if _, err := st.Get(context.Background(), id); err == nil {
		t.Error("the run is still in the store")
	}
}
