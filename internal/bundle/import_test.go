package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

func importT(t testing.TB, st *store.Store, doc []byte) *Imported {
	t.Helper()
	res, err := Import(context.Background(), st, bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Import stores what Decode reads; the same bundle imported again (as it
// was, or laid out anew with sorted keys) answers the first run and keeps
// nothing new; a bundle differing in one record is a run of its own.
func TestImportIsDecodeStreamedAndIdempotent(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := testBundle(rand.New(rand.NewPCG(21, 22)), 5000) // more than a chunk per trace
	doc := encodeT(t, b)
	first := importT(t, st, doc)
	if first.Existing || first.Traces != 4 || first.Records != 4*5000 || !strings.HasPrefix(first.Digest, "sha256:") {
		t.Fatalf("first import: %+v", first)
	}
	got, err := FromStore(ctx, st, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Decode(bytes.NewReader(doc))
	want.Aggregates = nil
	// a trace without a status of its own takes its summary's
	want.Traces[3].Status = want.Traces[3].Summary.Status
	if d := bundleDiff(want, got); d != "" {
		t.Fatalf("imported run differs from the bundle: %s", d)
	}

	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	sorted, _ := json.MarshalIndent(m, "", "  ") // another layout, sorted keys
	for name, d := range map[string][]byte{"again": doc, "laid out anew": sorted} {
		res := importT(t, st, d)
		if !res.Existing || res.ID != first.ID || res.Digest != first.Digest {
			t.Errorf("%s: %+v; want the first run %s", name, res, first.ID)
		}
	}
	other := testBundle(rand.New(rand.NewPCG(21, 22)), 5000)
	other.Traces[3].Records[4999].Gamma = 0.125
	if res := importT(t, st, encodeT(t, other)); res.Existing || res.ID == first.ID {
		t.Errorf("a bundle differing in one record: %+v", res)
	}
	if _, total, _ := st.List(ctx, store.Filter{}); total != 2 {
		t.Errorf("%d runs stored, want 2", total)
	}
}

// boundDoc is a small valid bundle with edits applied to its JSON object.
func boundDoc(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	b := testBundle(rand.New(rand.NewPCG(3, 3)), 3)
	var m map[string]any
	if err := json.Unmarshal(encodeT(t, b), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func trace(m map[string]any, i int) map[string]any { return m["traces"].([]any)[i].(map[string]any) }

// The bounds of an import, each refused naming the JSON path, by Decode
// and by Import alike (which then keeps nothing).
func TestBoundsAreRefusedNamingThePath(t *testing.T) {
	bigPanel := map[string]any{"x": strings.Repeat("a", MaxPanelBytes)}
	for _, c := range []struct {
		name, path, msg string
		edit            func(m map[string]any)
	}{
		{"65 extra metrics", "traces[0].records[1].extra.m64", "at most 64 extra metrics", func(m map[string]any) {
			recs := trace(m, 0)["records"].([]any)
			ex := map[string]any{}
			for i := 0; i < 64; i++ {
				ex["m"+fmt.Sprintf("%02d", i)] = 1.0
			}
			recs[0].(map[string]any)["extra"] = ex
			recs[1].(map[string]any)["extra"] = map[string]any{"m64": 1.0}
		}},
		{"instance panel too large", "info.panels", "at most 4 MiB", func(m map[string]any) {
			m["info"].(map[string]any)["panels"] = bigPanel
		}},
		{"trace panel too large", "traces[2].panels", "at most 4 MiB", func(m map[string]any) { trace(m, 2)["panels"] = bigPanel }},
		{"edge node beyond the panel", "info.panels.edges[1].l", "node id", func(m map[string]any) {
			m["info"].(map[string]any)["panels"] = map[string]any{"edges": []any{
				map[string]any{"m": 0, "l": 1, "r": 0.5}, map[string]any{"m": 0, "l": 30_000_000, "r": 0.5}}}
		}},
		{"edge as an array", "traces[0].panels.edges[0][1]", "node id", func(m map[string]any) {
			trace(m, 0)["panels"] = map[string]any{"edges": []any{[]any{0, -1, 1}}}
		}},
		{"component node", "info.panels.components[0][1]", "node id", func(m map[string]any) {
			m["info"].(map[string]any)["panels"] = map[string]any{"components": []any{[]any{0, 1.5}}}
		}},
		{"duplicate trace", "traces[1]", "duplicates traces[0]", func(m map[string]any) {
			trace(m, 1)["replication"] = 0
		}},
		{"unknown trace status", "traces[0].status", "must be one of", func(m map[string]any) { trace(m, 0)["status"] = "finished!" }},
		{"unknown summary status", "traces[3].summary.status", "must be one of", func(m map[string]any) {
			trace(m, 3)["summary"].(map[string]any)["status"] = "great"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := boundDoc(t, c.edit)
			_, derr := Decode(bytes.NewReader(doc))
			st, err := store.Open(store.Memory)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, ierr := Import(context.Background(), st, bytes.NewReader(doc))
			for name, err := range map[string]error{"Decode": derr, "Import": ierr} {
				var be *Error
				if !errors.As(err, &be) || be.Path != c.path || !strings.Contains(be.Msg, c.msg) {
					t.Errorf("%s: %v; want at %s: …%s…", name, err, c.path, c.msg)
				}
			}
			var n int
			if runs, total, _ := st.List(context.Background(), store.Filter{}); total != 0 {
				n = len(runs)
				t.Errorf("a refused import left %d runs", n)
			}
		})
	}
	// a panel within the bounds, nodes within its size, passes
	ok := boundDoc(t, func(m map[string]any) {
		m["info"].(map[string]any)["panels"] = map[string]any{"edges": []any{map[string]any{"m": 0, "l": 3, "r": -0.5}}, "components": []any{[]any{0, 3}}}
	})
	if _, err := Decode(bytes.NewReader(ok)); err != nil {
		t.Errorf("a panel with a small graph: %v", err)
	}
}

// resetPeakRSS resets the process's peak resident set to its present one
// (Linux's clear_refs); it reports whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns the process's peak resident set (VmHWM) in bytes, or -1
// where /proc cannot say.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return -1
}

// writeBigBundle writes a bundle of n records (one trace) to a file.
func writeBigBundle(t *testing.T, n int) string {
	t.Helper()
	b := testBundle(rand.New(rand.NewPCG(1, 1)), 0)
	b.Spec.Iters, b.Spec.Replications = 10_000_000, 1
	b.Traces = b.Traces[:1]
	for i := 0; i < n; i++ {
		b.Traces[0].Records = append(b.Traces[0].Records, solver.Record{K: i, Passes: float64(i) / 7, Time: float64(i) * 1e-6, Step: "fw",
			Gamma: 1 / float64(i+2), Batch: 10, Active: i % 50, Objective: solver.F(1 + 1/float64(i+1)), Gap: solver.F(1 / float64(i+1))})
	}
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Encode(f, b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// An import's memory does not grow with the bundle: the peak resident set
// of a streamed import of 400 000 records stays within a bound far below
// what decoding the bundle whole takes (the way imports were read before).
func TestImportMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large bundle")
	}
	if !resetPeakRSS() {
		t.Skip("SKIPPED: /proc/self/clear_refs is not available to measure the peak resident set")
	}
	const n = 400_000
	path := writeBigBundle(t, n)
	fi, _ := os.Stat(path)
	measure := func(name string, fn func(st *store.Store)) int64 {
		st, err := store.Open(filepath.Join(t.TempDir(), name+".db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS()
		base := peakRSS()
		fn(st)
		peak := peakRSS()
		t.Logf("%s of %d records (%d MB of JSON): peak RSS %d MB above the start, %.0f bytes per record",
			name, n, fi.Size()>>20, (peak-base)>>20, float64(peak-base)/n)
		return peak - base
	}
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	streamed := measure("Import (streamed)", func(st *store.Store) {
		f := open()
		defer f.Close()
		if res, err := Import(context.Background(), st, f); err != nil || res.Records != n {
			t.Fatalf("import: %+v %v", res, err)
		}
	})
	whole := measure("Decode then Put (whole)", func(st *store.Store) {
		f := open()
		defer f.Close()
		b, err := Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Put(context.Background(), st, b); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(b)
	})
	if streamed > 64<<20 {
		t.Errorf("a streamed import of %d records peaked %d MB above its start; want at most 64 MB whatever the size", n, streamed>>20)
	}
	if whole < 2*streamed {
		t.Logf("decoding whole peaked at %d MB, the streamed import at %d MB", whole>>20, streamed>>20)
	}
}

// Import accepts exactly what Decode accepts, with the same error. (Under
// -fuzz it runs a few inputs a second at most: the coverage of the SQLite
// driver, all of it Go, is what the engine spends its time on; FuzzDecode
// covers the decoder at speed.)
func FuzzImport(f *testing.F) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 3} {
		f.Add(encodeT(f, testBundle(rng, n)))
	}
	f.Add([]byte(`{"format":"fwlab-bundle","format_version":1,"version":"x","spec":{"problem":"lasso","algorithms":[{"algo":"afw"}]},"info":{"dim":1,"samples":1,"blocks":1},"traces":[]}`))
	st, err := store.Open(store.Memory)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		_, derr := Decode(bytes.NewReader(data))
		res, ierr := Import(context.Background(), st, bytes.NewReader(data))
		if (derr == nil) != (ierr == nil) || derr != nil && derr.Error() != ierr.Error() {
			t.Fatalf("Decode: %v; Import: %v", derr, ierr)
		}
		if ierr == nil {
			if _, err := st.Get(context.Background(), res.ID); err != nil {
				t.Fatalf("the imported run: %v", err)
			}
			return
		}
		var be *Error
		if !errors.As(ierr, &be) {
			t.Fatalf("error %v is not a bundle.Error", ierr)
		}
	})
}

// cancelAfter reads r, cancelling after n bytes.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	if c.n -= k; c.n <= 0 {
		c.cancel()
	}
	return k, err
}

// An import that fails part-way, with records already written by its
// writing goroutine, returns the failure, keeps nothing and leaves no
// goroutine behind: a malformed record late in the bundle, a cancelled
// context.
func TestImportFailingPartWayEndsItsWriter(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "fwlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	doc := encodeT(t, runBundle(4, 20_000))
	late := bytes.LastIndex(doc, []byte(`{"k":19000,`))
	bad := append(append(bytes.Clone(doc[:late]), `{"k":19000,"kk":1,`...), doc[late+len(`{"k":19000,`):]...)
	before := runtime.NumGoroutine()
	for _, c := range []struct {
		name string
		read func(ctx context.Context, cancel context.CancelFunc) io.Reader
		want func(error) bool
	}{
		{"malformed late", func(context.Context, context.CancelFunc) io.Reader { return bytes.NewReader(bad) },
			func(err error) bool {
				var be *Error
				return errors.As(err, &be) && be.Path == "traces[3].records[19000].kk"
			}},
		{"cancelled", func(ctx context.Context, cancel context.CancelFunc) io.Reader {
			return &cancelAfter{r: bytes.NewReader(doc), n: len(doc) * 3 / 4, cancel: cancel}
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		res, err := Import(ctx, st, c.read(ctx, cancel))
		cancel()
		if err == nil || !c.want(err) {
			t.Errorf("%s: %+v, %v", c.name, res, err)
		}
		if _, total, err := st.List(context.Background(), store.Filter{}); err != nil || total != 0 {
			t.Errorf("%s: %d runs stored (%v)", c.name, total, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before the imports:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	// nothing of the failed imports is left in the file
	if res := importT(t, st, doc); res.Existing {
		t.Fatalf("the bundle was stored before: %+v", res)
	}
	if _, total, _ := st.List(context.Background(), store.Filter{}); total != 1 {
		t.Fatalf("%d runs, want 1", total)
	}
}
