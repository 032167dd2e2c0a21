package queue

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// TestDefaultOCRSetIsChecked: a run of ssvm-ocr on the default OCR set
// carries the set's hash; a worker whose own default OCR file holds other
// bytes fails the run at once, naming the file.
func TestDefaultOCRSetIsChecked(t *testing.T) {
	real, err := ssvm.ResolveOCR("")
	if err != nil {
		t.Skipf("no OCR set here: %v", err)
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	mine, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(mine, ssvm.OCRFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ssvm.OCRFile), append([]byte{}, b[:len(b)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	url, st, q := newQueue(t)
	ctx := context.Background()
	t.Setenv(ssvm.EnvOCR, mine)
	id, err := q.Submit(ctx, spec.Run{Problem: "ssvm-ocr", Algorithms: []spec.Algo{{Algo: "bcfw-as"}}, Replications: 1, Seed: 1, Iters: 10})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.DataRefs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var refs []DataRef
	if err := json.Unmarshal(raw, &refs); err != nil || len(refs) != 1 || !refs[0].Default || refs[0].SHA256 != pgstore.SHA256(b) {
		t.Fatalf("the run's data files: %s, %v", raw, err)
	}
	// the worker's machine has another OCR file
	t.Setenv(ssvm.EnvOCR, other)
	startWorker(t, url, "w1", 1)
	waitFor(t, time.Minute, "the run's end", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && !store.Live(r.Status)
	})
	r, _ := st.Get(ctx, id)
	want := "params.data: the default OCR set " + filepath.Join(other, ssvm.OCRFile) + " holds other bytes"
	if r.Status != store.StatusFailed || !strings.Contains(r.Message, want) {
		t.Errorf("on a worker with another OCR file: %s %q, want failed with %q", r.Status, r.Message, want)
	}
}
