package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/verify"
)

// SameRun checks that run a of store sa and run b of store sb read the
// same through every field a page shows of them, whichever backend holds
// each and whichever executor made it (a server's sessions or a worker):
// the spec, status, message, version, user fields and instance (its
// panels included); each trace's name, replication, seed, status, record
// count, summary (its time aside), panels or why there are none; and every
// record (its time aside, as verify compares them). Wall-clock fields (the
// dates, Record.Time, Summary.Time) measure the machine and are left out.
func SameRun(t testing.TB, sa store.Backend, a string, sb store.Backend, b string) {
	t.Helper()
	ctx := context.Background()
	ra, err := sa.Get(ctx, a)
	if err != nil {
		t.Fatalf("run %s of %s: %v", a, sa.Path(), err)
	}
	rb, err := sb.Get(ctx, b)
	if err != nil {
		t.Fatalf("run %s of %s: %v", b, sb.Path(), err)
	}
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"spec", ra.Spec, rb.Spec}, {"status", ra.Status, rb.Status}, {"message", ra.Message, rb.Message},
		{"version", ra.Version, rb.Version}, {"name", ra.Name, rb.Name}, {"note", ra.Note, rb.Note},
		{"starred", ra.Starred, rb.Starred}, {"instance.dim", ra.Instance.Dim, rb.Instance.Dim},
		{"instance.samples", ra.Instance.Samples, rb.Instance.Samples}, {"instance.blocks", ra.Instance.Blocks, rb.Instance.Blocks},
		{"instance.fstar", optText(ra.Instance.FStar), optText(rb.Instance.FStar)},
		{"instance.panels", jsonValue(t, ra.Instance.Panels), jsonValue(t, rb.Instance.Panels)},
		{"ended", ra.Ended.IsZero(), rb.Ended.IsZero()}, {"traces", len(ra.Traces), len(rb.Traces)},
	} {
		if !reflect.DeepEqual(f.x, f.y) {
			t.Errorf("runs %s and %s: %s differs: %#v and %#v", a, b, f.name, f.x, f.y)
		}
	}
	if len(ra.Traces) != len(rb.Traces) {
		return
	}
	for i := range ra.Traces {
		ta, tb := ra.Traces[i], rb.Traces[i]
		for _, f := range []struct {
			name string
			x, y any
		}{
			{"index", ta.Index, tb.Index}, {"algo", ta.Algo, tb.Algo}, {"replication", ta.Replication, tb.Replication},
			{"seed", ta.Seed, tb.Seed}, {"status", ta.Status, tb.Status}, {"records", ta.Records, tb.Records},
			{"has_panels", ta.HasPanels, tb.HasPanels}, {"panels_error", ta.PanelsError, tb.PanelsError},
			{"panels", jsonValue(t, ta.Panels), jsonValue(t, tb.Panels)},
		} {
			if !reflect.DeepEqual(f.x, f.y) {
				t.Errorf("runs %s and %s, trace %d: %s differs: %#v and %#v", a, b, i, f.name, f.x, f.y)
			}
		}
		if field, x, y := verify.Summary(ta.Summary, tb.Summary); field != "" {
			t.Errorf("runs %s and %s, trace %d: summary %s differs: %s and %s", a, b, i, field, x, y)
		}
		pa, err := sa.TracePanels(ctx, a, i, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := sb.TracePanels(ctx, b, i, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(jsonValue(t, pa), jsonValue(t, pb)) {
			t.Errorf("runs %s and %s, trace %d: the panels read on their own differ", a, b, i)
		}
		recA, err := sa.Records(ctx, a, i, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		recB, err := sb.Records(ctx, b, i, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(recA) != len(recB) {
			t.Errorf("runs %s and %s, trace %d: %d and %d records read", a, b, i, len(recA), len(recB))
			continue
		}
		for k := range recA {
			if field, x, y := verify.Record(&recA[k], &recB[k]); field != "" {
				t.Errorf("runs %s and %s, trace %d, record %d: %s differs: %s and %s", a, b, i, k, field, x, y)
				break
			}
		}
	}
}

func optText(p *float64) string { return verify.FormatOpt(p) }

// jsonValue decodes a JSON text to compare it by value (nil for none).
func jsonValue(t testing.TB, b json.RawMessage) any {
	t.Helper()
	if len(bytes.TrimSpace(b)) == 0 || bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("stored JSON %.60q: %v", b, err)
	}
	return v
}
