package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestControl: pause, step and resume through the store, as a worker reads
// them at its heartbeat, and the notifications that wake it.
func TestControl(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	r := storetest.TestRun("lasso")
	r.Status = store.StatusQueued
	id, err := s.PutRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	wake, stop := s.Wake(ControlPayload(id))
	defer stop()
	time.Sleep(200 * time.Millisecond) // the listener is listening
	// a queued run paused stays paused when a worker claims it
	control := func(op, want string) {
		t.Helper()
		st, err := s.Control(ctx, id, op, 50*time.Millisecond)
		if err != nil || st != want {
			t.Fatalf("%s: %q, %v; want %q", op, st, err, want)
		}
	}
	control(OpPause, store.StatusPaused)
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification woke the worker after a pause")
	}
	if err := s.Claim(ctx, id, "w1/1/1"); err != nil {
		t.Fatal(err)
	}
	beat := func() RunControl {
		t.Helper()
		c, err := s.Beat(ctx, id, "w1/1/1")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := beat(); c.Status != store.StatusPaused || c.Steps != 0 {
		t.Fatalf("claimed while paused: %+v", c)
	}
	control(OpStep, store.StatusPaused)
	control(OpStep, store.StatusPaused)
	if c := beat(); c.Status != store.StatusPaused || c.Steps != 2 || c.PauseTimeout != 50*time.Millisecond {
		t.Fatalf("after two steps: %+v", c)
	}
	time.Sleep(100 * time.Millisecond)
	if c := beat(); !c.PauseExpired() {
		t.Errorf("paused for 100 ms with a timeout of 50 ms: %+v", c)
	}
	control(OpPause, store.StatusPaused) // a pause of a paused run changes nothing
	control(OpResume, store.StatusRunning)
	if c := beat(); c.Status != store.StatusRunning || c.PauseExpired() {
		t.Fatalf("after a resume: %+v", c)
	}
	control(OpResume, store.StatusRunning)
	control(OpStep, store.StatusPaused) // a step of a running run pauses it
	if c := beat(); c.Steps != 2 {
		t.Errorf("a step of a running run granted a step: %+v", c)
	}
	// released while paused: queued for another worker, still paused;
	// resumed without a worker: queued
	if err := s.Release(ctx, id, "w1/1/1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, id); got.Status != store.StatusPaused {
		t.Errorf("released while paused: %s", got.Status)
	}
	control(OpResume, store.StatusQueued)
	if err := s.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	control(OpResume, store.StatusCancelled) // an ended run is left alone
	if _, err := s.Control(ctx, "nosuchrun333", OpPause, time.Minute); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown run: %v", err)
	}
	if _, err := s.Control(ctx, id, "jump", time.Minute); err == nil {
		t.Error("an unknown control was taken")
	}
}
