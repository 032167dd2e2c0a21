package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
)

// The history, compare and sweep pages are driven here against the real
// server over a run store in a temporary SQLite file (storeServer), seeded
// with real runs made through the API: paused, cancelled, failed and
// interrupted ones included, named, noted and starred through the API,
// and bundles exported from the store.

// apiJSON sends v as JSON with the method to the path and decodes the
// answer into out (when not nil); it fails the test on any status but want.
func apiJSON(t *testing.T, method, url string, v any, want int, out any) {
	t.Helper()
	var body io.Reader
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, res.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
}

// runStatus is a run's status as GET /api/runs/{id} says.
func runStatus(t *testing.T, base, id string) string {
	t.Helper()
	var st struct{ Status string }
	if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	return st.Status
}

// waitStatus polls a run until its status is want.
func waitStatus(t *testing.T, base, id, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for runStatus(t, base, id) != want {
		if time.Now().After(deadline) {
			t.Fatalf("run %s: status %s, want %s", id, runStatus(t, base, id), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The runs of the history's store, oldest first: two done toy-polygon
// runs of ssfw-as and FISTA with two replications that differ in rho
// only, a lasso run that fails (FISTA with L = 1e-300 steps to infinity;
// afw runs the slack collapse, so that its trace is named "afw + slack
// collapse" and the algorithm filter's afw must find it as a variant),
// a lasso run interrupted by the end of the server it was paused on, and
// a toy-polygon run of fw cancelled while paused.
const (
	histZigZag  = `{"problem":"toy-polygon","params":{"samples":"1000"},"algorithms":[{"algo":"ssfw-as","rho":0.1},{"algo":"fista"}],"iters":200,"replications":2,"eval_every":1}`
	histHalved  = `{"problem":"toy-polygon","params":{"samples":"1000"},"algorithms":[{"algo":"ssfw-as","rho":0.05},{"algo":"fista"}],"iters":200,"replications":2,"eval_every":1}`
	histFailing = `{"problem":"lasso","algorithms":[{"algo":"afw"},{"algo":"fista","L":"1e-300"}],"iters":50}`
	histPaused  = `{"problem":"lasso","algorithms":[{"algo":"ssfw-as","rho":0.2}],"iters":100000,"start_paused":true}`
	histFW      = `{"problem":"toy-polygon","params":{"samples":"500"},"algorithms":[{"algo":"fw"}],"iters":100000,"start_paused":true}`
	histBundled = `{"problem":"toy-polygon","params":{"samples":"300"},"algorithms":[{"algo":"afw"}],"iters":30,"seed":%d}`
)

// historyStore is a store seeded with the runs above; ids are in the
// order made; bundles are two runs' bundles, made after the others and
// deleted from the store since.
type historyStore struct {
	base    string
	ids     [5]string
	bundles [2][]byte
}

func seedHistory(t *testing.T) *historyStore {
	t.Helper()
	db := filepath.Join(t.TempDir(), "fwlab.db")
	base, stop := storeServer(t, db)
	h := &historyStore{}
	made := func(spec string) string {
		id := postRun(t, base, spec)
		// distinct creation times, so that newest first is one order
		time.Sleep(20 * time.Millisecond)
		return id
	}
	h.ids[0] = made(histZigZag)
	waitRunEnded(t, base, h.ids[0])
	h.ids[1] = made(histHalved)
	waitRunEnded(t, base, h.ids[1])
	h.ids[2] = made(histFailing)
	if st := waitRunEnded(t, base, h.ids[2]); st != "failed" {
		t.Fatalf("the failing run ended %s", st)
	}
	h.ids[3] = made(histPaused)
	waitStatus(t, base, h.ids[3], "paused")
	apiJSON(t, "PATCH", base+"/api/runs/"+h.ids[0], map[string]any{"name": "zig-zag baseline", "note": "first try"}, 200, nil)
	apiJSON(t, "PATCH", base+"/api/runs/"+h.ids[1], map[string]any{"note": "rho halved"}, 200, nil)
	apiJSON(t, "PATCH", base+"/api/runs/"+h.ids[3], map[string]any{"name": "lasso long"}, 200, nil)
	// The server ends with the run paused; the next one on the file finds
	// it interrupted.
	stop()
	base, _ = storeServer(t, db)
	h.base = base
	if st := runStatus(t, base, h.ids[3]); st != "interrupted" {
		t.Fatalf("the run paused when its server ended is %s after a restart", st)
	}
	h.ids[4] = made(histFW)
	waitStatus(t, base, h.ids[4], "paused")
	stopRun(base, h.ids[4])
	if st := waitRunEnded(t, base, h.ids[4]); st != "cancelled" {
		t.Fatalf("the run stopped while paused is %s", st)
	}
	for i := range h.bundles {
		id := made(fmt.Sprintf(histBundled, i+1))
		waitRunEnded(t, base, id)
		h.bundles[i] = httpGet(t, base+"/api/runs/"+id+"/bundle")
		apiJSON(t, "POST", base+"/api/runs/delete", map[string]any{"ids": []string{id}}, 200, nil)
	}
	return h
}

// listIDs is the ids GET /api/runs lists, newest first.
func listIDs(t *testing.T, base string) []string {
	t.Helper()
	var l struct{ Runs []struct{ ID string } }
	if err := json.Unmarshal(httpGet(t, base+"/api/runs?limit=100"), &l); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range l.Runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// medianOf is the median of xs.
func medianOf(xs []float64) float64 {
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	if len(v) == 0 {
		return math.NaN()
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// TestHistoryPageLayout drives the history page over a real store seeded
// with real runs: newest first, each filter and the search narrow the
// list, star and rename are sent, a delete asks first and removes exactly
// the runs selected, the drop zone's file picker imports a bundle and
// names the field of a refused one, and two selected runs open the
// compare page. No console error at either size.
func TestHistoryPageLayout(t *testing.T) {
	t.Parallel()
	h := seedHistory(t)
	ts := struct{ URL string }{h.base}
	id1, id2, id3, id4, id5 := h.ids[0], h.ids[1], h.ids[2], h.ids[3], h.ids[4]
	join := func(ids ...string) string { return strings.Join(ids, ",") }
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(ts.URL+"/runs"))
	waitFor(t, ctx, "the list", `fwlab.history && fwlab.history.loads > 0`, `document.querySelector('#history-error').textContent`, 10*time.Second)
	ids := func() string { return eval[string](t, ctx, `fwlab.history.rows.map(r => r.id).join(',')`) }
	if got := ids(); got != join(id5, id4, id3, id2, id1) {
		t.Fatalf("rows %s, want newest first %s", got, join(id5, id4, id3, id2, id1))
	}
	if d := eval[string](t, ctx, `document.querySelector('#disk-used').textContent`); !strings.Contains(d, "KB on disk") && !strings.Contains(d, "MB on disk") {
		t.Errorf("disk used: %q", d)
	}
	row1 := eval[string](t, ctx, `document.querySelector('tr[data-run="`+id1+`"]').textContent`)
	for _, want := range []string{"zig-zag baseline", "first try", "ssfw-as", "fista", "samples=1000", "replications=2", "iters=200", "toy-polygon"} {
		if !strings.Contains(row1, want) {
			t.Errorf("row of %s lacks %q: %q", id1, want, row1)
		}
	}
	// The final objective: the median of the two replications' last values
	// of ssfw-as, from the run's trace.
	var st1 struct{ Traces []struct{ Algo string } }
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id1), &st1); err != nil {
		t.Fatal(err)
	}
	last := map[int]float64{}
	for _, r := range serverTrace(t, ts.URL, id1) {
		if r.Trace < len(st1.Traces) && st1.Traces[r.Trace].Algo == "ssfw-as" && r.Objective != nil {
			last[r.Trace] = *r.Objective
		}
	}
	var lasts []float64
	for _, v := range last {
		lasts = append(lasts, v)
	}
	if len(lasts) != 2 {
		t.Fatalf("ssfw-as's replications in the trace: %v", last)
	}
	wantObj := medianOf(lasts)
	if !strings.Contains(row1, fmt.Sprintf("%.6g", wantObj)[:6]) {
		t.Errorf("row of %s: final objective %v not shown: %q", id1, wantObj, row1)
	}
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(200 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("history %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("history-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)

	filter := func(sel, value, want string) {
		t.Helper()
		loads := eval[int](t, ctx, `fwlab.history.loads`)
		choose(t, ctx, sel, value)
		waitFor(t, ctx, "filtered by "+sel+"="+value, fmt.Sprintf(`fwlab.history.loads > %d && fwlab.history.rows.map(r => r.id).join(',') === %q`, loads, want), `fwlab.history.rows.map(r => r.id).join(',')`, 10*time.Second)
	}
	waitFor(t, ctx, "the problems offered", `Array.from(document.querySelectorAll('#f-problem option')).some(o => o.value === 'toy-polygon')`, `document.querySelector('#f-problem').innerHTML`, 10*time.Second)
	filter("#f-problem", "toy-polygon", join(id5, id2, id1))
	filter("#f-status", "done", join(id2, id1))
	filter("#f-q", "halved", id2)
	if u := eval[string](t, ctx, `location.search`); !strings.Contains(u, "problem=toy-polygon") || !strings.Contains(u, "q=halved") {
		t.Errorf("the filters are not in the URL: %q", u)
	}
	filter("#f-q", "", join(id2, id1))
	filter("#f-status", "", join(id5, id2, id1))
	filter("#f-problem", "", join(id5, id4, id3, id2, id1))
	filter("#f-algo", "afw", id3)
	filter("#f-algo", "", join(id5, id4, id3, id2, id1))

	// Star, then rename with a note.
	tr2 := `tr[data-run="` + id2 + `"]`
	step(t, ctx, "star", 5*time.Second, chromedp.Click(chromedp.CSS(tr2+` .star`)))
	waitFor(t, ctx, "the star", `document.querySelector('`+tr2+` .star').textContent === '★'`, `fwlab.history`, 5*time.Second)
	step(t, ctx, "edit", 5*time.Second, chromedp.Click(chromedp.CSS(tr2+` button.edit`)))
	step(t, ctx, "rename", 5*time.Second,
		chromedp.SetValue(chromedp.CSS(tr2+` .edit-name`), "rho 0.05"),
		chromedp.SetValue(chromedp.CSS(tr2+` .edit-note`), "slower at first"),
		chromedp.Click(chromedp.CSS(tr2+` button.save`)))
	waitFor(t, ctx, "the new name", `document.querySelector('`+tr2+`').textContent.includes('rho 0.05')`, `document.querySelector('`+tr2+`').textContent`, 5*time.Second)
	var r2 struct {
		Name, Note string
		Starred    bool
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id2), &r2); err != nil || !r2.Starred || r2.Name != "rho 0.05" || r2.Note != "slower at first" {
		t.Errorf("the server holds starred=%v name=%q note=%q (%v)", r2.Starred, r2.Name, r2.Note, err)
	}

	// Delete two runs: the confirmation first; Keep deletes nothing.
	for _, id := range []string{id5, id3} {
		step(t, ctx, "select "+id, 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run="`+id+`"] input.pick`)))
	}
	step(t, ctx, "delete", 5*time.Second, chromedp.Click(chromedp.ID("btn-delete")))
	if txt := eval[string](t, ctx, `document.querySelector('#confirm-delete').hidden ? '' : document.querySelector('#confirm-text').textContent`); !strings.Contains(txt, "2 runs") {
		t.Fatalf("no confirmation before deleting: %q", txt)
	}
	step(t, ctx, "keep", 5*time.Second, chromedp.Click(chromedp.ID("confirm-no")))
	time.Sleep(300 * time.Millisecond)
	if n, held := eval[int](t, ctx, `fwlab.history.rows.length`), join(listIDs(t, ts.URL)...); n != 5 || held != join(id5, id4, id3, id2, id1) {
		t.Fatalf("Keep deleted something: %d rows, the server holds %s", n, held)
	}
	step(t, ctx, "delete", 5*time.Second, chromedp.Click(chromedp.ID("btn-delete")))
	step(t, ctx, "confirm", 5*time.Second, chromedp.Click(chromedp.ID("confirm-yes")))
	waitFor(t, ctx, "the rows left", fmt.Sprintf(`fwlab.history.rows.map(r => r.id).join(',') === %q`, join(id4, id2, id1)), `fwlab.history.rows.map(r => r.id).join(',')`, 10*time.Second)
	if held := join(listIDs(t, ts.URL)...); held != join(id4, id2, id1) {
		t.Errorf("after deleting %s and %s the server holds %s", id5, id3, held)
	}
	for _, id := range []string{id5, id3} {
		res, err := http.Get(ts.URL + "/api/runs/" + id)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("GET the deleted run %s: %d, want 404", id, res.StatusCode)
		}
	}

	// Import: a file that is not a bundle is refused naming the field; a
	// bundle (exported by the server) becomes a run shown at the top.
	bad := filepath.Join(dir, "notes.json")
	good := filepath.Join(dir, "run.json")
	_ = os.WriteFile(bad, []byte(`{"format": "notes"}`), 0o644)
	_ = os.WriteFile(good, h.bundles[0], 0o644)
	step(t, ctx, "import notes.json", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{bad}))
	waitFor(t, ctx, "the refusal", `document.querySelector('#drop-zone').dataset.state === 'rejected'`, `document.querySelector('#import-status').textContent`, 10*time.Second)
	// The refusal's 400 is logged by the browser as a failed request: the
	// one expected entry.
	for _, e := range errs.take() {
		if !strings.Contains(e, "400") || !strings.Contains(e, "/api/runs/import") {
			t.Errorf("console: %s", e)
		}
	}
	if msg := eval[string](t, ctx, `document.querySelector('#import-status').textContent`); !strings.Contains(msg, "notes.json was refused: format: ") {
		t.Errorf("import error %q, want the field named", msg)
	}
	if held := join(listIDs(t, ts.URL)...); held != join(id4, id2, id1) {
		t.Errorf("after a refused import the server holds %s", held)
	}
	step(t, ctx, "import run.json", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{good}))
	waitFor(t, ctx, "the imported run", `document.querySelector('#drop-zone').dataset.state === 'done' && fwlab.history.rows.length === 4`, `[document.querySelector('#import-status').textContent, fwlab.history.rows.map(r => r.id)]`, 10*time.Second)
	held := listIDs(t, ts.URL)
	if len(held) != 4 || join(held[1:]...) != join(id4, id2, id1) {
		t.Fatalf("after the import the server holds %v", held)
	}
	imp1 := held[0]
	if got := ids(); got != join(imp1, id4, id2, id1) {
		t.Errorf("rows %s, want the imported run %s at the top", got, imp1)
	}
	if href := eval[string](t, ctx, `document.querySelector('[data-imported]').getAttribute('href')`); href != "/runs/"+imp1 {
		t.Errorf("the imported run's link %q, want /runs/%s", href, imp1)
	}
	// A file dropped on the zone is imported the same way.
	dropped, _ := json.Marshal(string(h.bundles[1]))
	eval[bool](t, ctx, `(() => {
		const dt = new DataTransfer();
		dt.items.add(new File([`+string(dropped)+`], 'dropped.json', {type: 'application/json'}));
		const z = document.querySelector('#drop-zone');
		z.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
		z.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`)
	waitFor(t, ctx, "the dropped run", fmt.Sprintf(`fwlab.history.imported && fwlab.history.imported !== %q && fwlab.history.rows.length === 5 && fwlab.history.rows[0].id === fwlab.history.imported`, imp1), `[document.querySelector('#import-status').textContent, fwlab.history.rows.map(r => r.id)]`, 10*time.Second)
	held = listIDs(t, ts.URL)
	if len(held) != 5 || join(held[1:]...) != join(imp1, id4, id2, id1) {
		t.Fatalf("after the drop the server holds %v", held)
	}
	imp2 := held[0]
	if got := eval[string](t, ctx, `fwlab.history.imported`); got != imp2 {
		t.Errorf("the page imported %s, the server holds %s", got, imp2)
	}
	if msg := eval[string](t, ctx, `document.querySelector('#import-status').textContent`); !strings.Contains(msg, "imported dropped.json as "+imp2) {
		t.Errorf("import status %q", msg)
	}

	// Two selected runs → Compare.
	step(t, ctx, "select "+id1, 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run="`+id1+`"] input.pick`)))
	if !eval[bool](t, ctx, `document.querySelector('#btn-compare').disabled`) {
		t.Error("Compare is enabled with one run selected")
	}
	step(t, ctx, "select "+imp1, 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run="`+imp1+`"] input.pick`)))
	if eval[bool](t, ctx, `document.querySelector('#btn-compare').disabled`) {
		t.Fatal("Compare is disabled with two runs selected")
	}
	step(t, ctx, "compare", 5*time.Second, chromedp.Click(chromedp.ID("btn-compare")))
	waitFor(t, ctx, "the compare page", `location.pathname === '/compare' && window.fwlab && fwlab.compare && fwlab.compare.loaded`, `location.href`, 20*time.Second)
	want := []string{id1, imp1}
	sort.Strings(want)
	if got := eval[string](t, ctx, `fwlab.compare.runs.slice().sort().join(',')`); got != join(want...) {
		t.Errorf("compare opened with %s, want %s", got, join(want...))
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	logShots(t)
}

// TestComparePageLayout: the compare page over a real store overlays two
// runs' traces (each algorithm of each run a group in its own colour,
// replications as a band) on the run page's charts, highlights the
// differing parameters, flags runs on different instances, and keeps its
// controls working; no console error at either size.
func TestComparePageLayout(t *testing.T) {
	t.Parallel()
	h := seedHistory(t)
	ts := struct{ URL string }{h.base}
	id1, id2, id4 := h.ids[0], h.ids[1], h.ids[3]
	// What the server holds: the records of each algorithm's traces, and
	// the largest count of passes of the two runs.
	records := map[string][]int{} // by run:algo
	maxPasses := math.Inf(-1)
	for _, id := range []string{id1, id2} {
		var st struct {
			Traces []struct {
				Algo    string
				Records int
			}
		}
		if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil {
			t.Fatal(err)
		}
		for _, tr := range st.Traces {
			records[id+":"+tr.Algo] = append(records[id+":"+tr.Algo], tr.Records)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(httpGet(t, ts.URL+"/api/runs/"+id+"/trace?format=jsonl"))), "\n") {
			var r struct{ Passes *float64 }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			if r.Passes != nil {
				maxPasses = math.Max(maxPasses, *r.Passes)
			}
		}
	}
	t.Logf("records %v, at most %v passes", records, maxPasses)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(ts.URL+"/compare?runs="+id1+","+id2))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	type group struct {
		Key   string `json:"key"`
		Run   string `json:"run"`
		Label string `json:"label"`
		Color string `json:"color"`
		N     int    `json:"n"`
		Reps  int    `json:"reps"`
	}
	gs := eval[[]group](t, ctx, `fwlab.compare.groups`)
	// fista ran with the same records in both runs (only ssfw-as's rho
	// differs): it is drawn once, marked identical in both
	if len(gs) != 3 {
		t.Fatalf("groups %+v, want ssfw-as of each run and one fista identical in both", gs)
	}
	colours := map[string]bool{}
	for _, g := range gs {
		colours[g.Color] = true
		// a group holds its replications' records, every one of each
		algo := strings.TrimPrefix(g.Key, g.Run+":")
		algo = algo[:strings.Index(algo+"#", "#")]
		reps := records[g.Run+":"+algo]
		most := 0
		for _, n := range reps {
			most = max(most, n)
		}
		if len(reps) != 2 || g.Reps != 2 || g.N != most {
			t.Errorf("group %s: %d records of %d replications, want %d of 2 (the server's traces %v)", g.Label, g.N, g.Reps, most, reps)
		}
	}
	if len(colours) != 3 {
		t.Errorf("the groups share colours: %+v", gs)
	}
	series := eval[[]string](t, ctx, `fwlab.charts.objective.series.map(s => s.label)`)
	joined := strings.Join(series, "|")
	for _, want := range []string{"zig-zag baseline · ssfw-as", "fista · identical in zig-zag baseline and " + id2, "ssfw-as · " + id2} {
		if !strings.Contains(joined, want) {
			t.Errorf("the objective chart lacks %q: %v", want, series)
		}
	}
	if !eval[bool](t, ctx, `fwlab.charts.objective.band === true`) {
		t.Error("no band for two replications")
	}
	if got := eval[string](t, ctx, `fwlab.compare.differ.join(',')`); got != "algorithms[0].rho" {
		t.Errorf("differing parameters %q, want algorithms[0].rho", got)
	}
	if !eval[bool](t, ctx, `document.querySelector('#spec-diff tr.differ[data-key="algorithms[0].rho"]') !== null`) {
		t.Error("the differing row is not highlighted")
	}
	if eval[bool](t, ctx, `fwlab.compare.flagged || !document.querySelector('#compare-flag').hidden`) {
		t.Error("two runs on the same instance are flagged")
	}
	// The controls: x-axis, log x, bands off. F(x) itself, so that every
	// record can be drawn on a log scale (FISTA's F − F* reaches 0): the
	// x-axis then ends at the largest count of passes of the two runs.
	choose(t, ctx, "#objmode", "raw")
	choose(t, ctx, "#xaxis", "passes")
	waitFor(t, ctx, "x in passes", fmt.Sprintf(`fwlab.charts.objective.xkey === 'passes' && Math.abs(fwlab.charts.objective.xmax - %v) <= 1e-9 * %v`, maxPasses, math.Abs(maxPasses)), `fwlab.charts.objective`, 5*time.Second)
	step(t, ctx, "bands off", 5*time.Second, chromedp.Click(chromedp.ID("bands")))
	waitFor(t, ctx, "no band", `fwlab.charts.objective.band === false`, `fwlab.charts.objective`, 5*time.Second)
	step(t, ctx, "log x", 5*time.Second, chromedp.Click(chromedp.ID("logx")))
	waitFor(t, ctx, "log x", `fwlab.charts.objective.logx === true && fwlab.charts.objective.drawn > 0`, `fwlab.charts.objective`, 5*time.Second)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(400 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("compare %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("compare-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)
	// Runs on different instances are flagged.
	step(t, ctx, "compare across instances", 20*time.Second, chromedp.Navigate(ts.URL+"/compare?runs="+id1+","+id4))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded`, `fwlab.compare`, 20*time.Second)
	if !eval[bool](t, ctx, `fwlab.compare.flagged && !document.querySelector('#compare-flag').hidden`) {
		t.Error("runs on different problems are not flagged")
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	logShots(t)
}

// postSweep starts a sweep through the API and returns its id.
func postSweep(t *testing.T, base, doc string) string {
	t.Helper()
	var created struct{ ID string }
	apiJSON(t, "POST", base+"/api/sweeps", json.RawMessage(doc), 201, &created)
	return created.ID
}

// sweepState is GET /api/sweeps/{id}: its status and cells.
type sweepState struct {
	Status string `json:"status"`
	Base   struct {
		Problem    string           `json:"problem"`
		Algorithms []map[string]any `json:"algorithms"`
	} `json:"base"`
	Axes []struct {
		Param  string    `json:"param"`
		Values []float64 `json:"values"`
	} `json:"axes"`
	Cells []struct {
		Values  map[string]float64 `json:"values"`
		Run     string             `json:"run"`
		Status  string             `json:"status"`
		Summary *struct {
			FinalGap    *float64 `json:"final_gap"`
			PassesToGap *float64 `json:"passes_to_gap"`
		} `json:"summary"`
	} `json:"cells"`
}

func getSweep(t *testing.T, base, id string) sweepState {
	t.Helper()
	var sw sweepState
	if err := json.Unmarshal(httpGet(t, base+"/api/sweeps/"+id), &sw); err != nil {
		t.Fatal(err)
	}
	return sw
}

// TestSweepPageLayout: a real 3 × 2 sweep, opened while it runs, is drawn
// as a heat map that follows it to the end; each cell links to its run,
// brighter cells have larger outcomes, a gap never reached is said so; a
// one-axis sweep is drawn as a line. No console error at either size.
//
// The sweep's cells start paused and the test resumes them one at a time,
// each once the page has shown the one before it ended: the page sees the
// sweep running and its cells end one by one however fast the machine,
// and the cells need no more iterations than make their final gaps differ
// (Frank-Wolfe with the open-loop step 2/(k+2) never stops before its last
// iteration, and its gap, O(1/k), stays far above the target 1e-6 after
// 600 to 1800 iterations).
func TestSweepPageLayout(t *testing.T) {
	t.Parallel()
	onBothStores(t, testSweepPageLayout)
}

func testSweepPageLayout(t *testing.T, be *backend) {
	base := be.url
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	two := postSweep(t, base, `{"base":{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000"},"algorithms":[{"algo":"fw","stepsize":"open-loop"}],"eval_every":10,"start_paused":true},
		"axes":[{"param":"iters","values":[600,1200,1800]},{"param":"seed","values":[1,2]}]}`)
	step(t, ctx, "open the sweep", 20*time.Second, chromedp.Navigate(base+"/sweeps/"+two))
	waitFor(t, ctx, "a partial heat map", `fwlab.sweep && fwlab.sweep.kind === 'heatmap' && fwlab.sweep.status === 'running'`, `fwlab.sweep`, 10*time.Second)
	t0 := time.Now()
	endCellsOneByOne(t, ctx, be, two, 6)
	waitFor(t, ctx, "the sweep's end", `fwlab.sweep.status === 'done' && document.querySelectorAll('#heatmap td.hm-cell a[data-run]').length === 6`, `fwlab.sweep`, 60*time.Second)
	t.Logf("the sweep ended %.1f s after the page saw it running; %d polls", time.Since(t0).Seconds(), eval[int](t, ctx, `fwlab.sweep.polls`))
	// Every cell is filled in once it has ended, those the page first saw
	// running included.
	waitFor(t, ctx, "every cell filled in", `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).every(td => td.dataset.status === 'done' && /^[0-9.e+-]+$/.test(td.textContent.trim()))`,
		`Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => td.dataset.status + ': ' + td.textContent)`, 10*time.Second)
	sw := getSweep(t, base, two)
	if p := eval[int](t, ctx, `fwlab.sweep.polls`); p < 6 {
		t.Errorf("the page polled %d times, want one per ended cell", p)
	}
	// The heat map's rows are the second axis' values, its columns the
	// first's.
	var wantLinks []string
	for _, v1 := range sw.Axes[1].Values {
		for _, v0 := range sw.Axes[0].Values {
			for _, c := range sw.Cells {
				if c.Values[sw.Axes[0].Param] == v0 && c.Values[sw.Axes[1].Param] == v1 {
					wantLinks = append(wantLinks, "/runs/"+c.Run)
				}
			}
		}
	}
	gap := map[string]float64{}
	reached := 0
	for _, c := range sw.Cells {
		if c.Status != "done" || c.Summary == nil || c.Summary.FinalGap == nil {
			t.Fatalf("cell %+v", c)
		}
		gap[c.Run] = *c.Summary.FinalGap
		be.checkRanHere(t, c.Run)
		if c.Summary.PassesToGap != nil {
			reached++
		}
	}
	if reached == len(sw.Cells) {
		t.Fatalf("every cell reached the gap target: %+v", sw.Cells)
	}
	links := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell a')).map(a => a.getAttribute('href'))`)
	if strings.Join(links, ",") != strings.Join(wantLinks, ",") {
		t.Errorf("cell links %v, want %v", links, wantLinks)
	}
	// A larger final gap is a brighter shade (viridis: dark to light).
	type shade struct {
		Run string  `json:"run"`
		Lum float64 `json:"lum"`
	}
	lum := eval[[]shade](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => { const m = getComputedStyle(td).backgroundColor.match(/\d+/g).map(Number); return {run: td.querySelector('a[data-run]').dataset.run, lum: 0.2126*m[0] + 0.7152*m[1] + 0.0722*m[2]}; })`)
	distinct := map[float64]bool{}
	for _, g := range gap {
		distinct[g] = true
	}
	if len(lum) != 6 || len(distinct) < 3 {
		t.Errorf("cells %v, final gaps %v", lum, gap)
	}
	for _, a := range lum {
		for _, b := range lum {
			if gap[a.Run] < gap[b.Run] && !(a.Lum < b.Lum) {
				t.Errorf("cell %s (final gap %g) is not darker than cell %s (final gap %g): %v", a.Run, gap[a.Run], b.Run, gap[b.Run], lum)
			}
		}
	}
	choose(t, ctx, "#outcome", "passes_to_gap")
	// a cell none of whose replications reached the gap says so, and how
	// many tried: "not reached", "reached in 0 of 1"
	waitFor(t, ctx, "passes to the gap", `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).some(td => td.firstChild.textContent === 'not reached' && td.querySelector('.hm-reached') && td.querySelector('.hm-reached').textContent === 'reached in 0 of 1')`, `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => td.textContent)`, 5*time.Second)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(300 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("sweep %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("sweep-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)
	one := postSweep(t, base, `{"base":{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as"}],"iters":100},"axes":[{"param":"algorithms[0].rho","values":[0.05,0.1,0.2]}]}`)
	step(t, ctx, "open a one-axis sweep", 20*time.Second, chromedp.Navigate(base+"/sweeps/"+one))
	waitFor(t, ctx, "the line", `fwlab.sweep && fwlab.sweep.kind === 'line' && fwlab.sweep.status === 'done' && document.querySelectorAll('#sweep-line a[data-run] circle').length === 3`, `fwlab.sweep`, 60*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#sweep-line polyline').length`); n != 1 {
		t.Errorf("%d lines drawn", n)
	}
	shot(t, ctx, dir, "sweep-line-1400x1000.png")
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	logShots(t)
}

// endCellsOneByOne resumes the paused cells of sweep id one at a time,
// each once the page shows every cell resumed before it ended, until n
// cells have ended. On the cluster it resumes a cell a worker has taken:
// one still in the queue would wait for a slot that paused cells hold.
func endCellsOneByOne(t *testing.T, ctx context.Context, be *backend, id string, n int) {
	t.Helper()
	taken := func(run string) bool {
		var st struct{ Worker string }
		if err := json.Unmarshal(httpGet(t, be.url+"/api/runs/"+run), &st); err != nil {
			t.Fatal(err)
		}
		return !be.onCluster() || st.Worker != ""
	}
	for ended := 0; ended < n; ended++ {
		run := ""
		deadline := time.Now().Add(60 * time.Second)
		for run == "" {
			for _, c := range getSweep(t, be.url, id).Cells {
				if c.Run != "" && c.Status == "paused" && taken(c.Run) {
					run = c.Run
					break
				}
			}
			if run == "" {
				if time.Now().After(deadline) {
					t.Fatalf("no paused cell to resume after %d ended: %+v", ended, getSweep(t, be.url, id).Cells)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		apiJSON(t, "POST", be.url+"/api/runs/"+run+"/resume", nil, 202, nil)
		waitFor(t, ctx, fmt.Sprintf("the page to show %d cells ended", ended+1), fmt.Sprintf(`document.querySelectorAll('#heatmap td.hm-cell[data-status=done]').length === %d`, ended+1),
			`Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => td.dataset.status)`, 60*time.Second)
	}
}

// TestRunPageQueued: with one run slot taken, a second run waits in the
// queue: its page says so with its place, Stop takes it off the queue,
// and the page shows it cancelled.
func TestRunPageQueued(t *testing.T) {
	t.Parallel()
	ts := appWith(t, server.Options{Session: session.Options{MaxActive: 1}})
	first := postRun(t, ts.URL, longFista)
	defer stopRun(ts.URL, first)
	second := postRun(t, ts.URL, quickToy)
	defer stopRun(ts.URL, second)
	var st struct {
		Status        string `json:"status"`
		QueuePosition int    `json:"queue_position"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+second), &st); err != nil || st.Status != "queued" {
		t.Fatalf("the server does not queue a run beyond its slots (status %q, %v)", st.Status, err)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the queued run", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+second))
	waitFor(t, ctx, "the queued status", `fwlab.status === 'queued'`, `fwlab.status`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#run-status').textContent`); got != fmt.Sprintf("queued (position %d)", st.QueuePosition) {
		t.Errorf("status badge %q, want its place in the queue %d", got, st.QueuePosition)
	}
	if eval[bool](t, ctx, `document.querySelector('#btn-stop').disabled`) || !eval[bool](t, ctx, `document.querySelector('#btn-pause').disabled`) {
		t.Error("a queued run: Stop must be enabled and Pause disabled")
	}
	step(t, ctx, "stop", 5*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	waitFor(t, ctx, "the cancelled run", `fwlab.status === 'cancelled'`, `fwlab.status`, 10*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestPauseShowsServerRecords: with the stream throttled far below the
// solver's pace (a message per 300 ms of at most 20 records), Pause makes
// the page hold exactly the records the server holds at once, by fetching
// what the stream has not sent, instead of draining the backlog slowly.
func TestPauseShowsServerRecords(t *testing.T) {
	t.Parallel()
	o := oneSolver()
	o.MinInterval, o.MaxBatch = 300*time.Millisecond, 20
	ts := appWith(t, o)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, id)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "the page behind the server", `fwlab.status === 'running' && fwlab.sync && fwlab.sync.server > fwlab.sync.page + 1000`, `[fwlab.status, fwlab.sync]`, 30*time.Second)
	step(t, ctx, "pause", 10*time.Second, chromedp.Click(chromedp.ID("btn-pause")))
	t0 := time.Now()
	waitFor(t, ctx, "the page where the server paused", `fwlab.status === 'paused' && fwlab.sync.page === fwlab.sync.server && !fwlab.sync.behind`, `[fwlab.status, fwlab.sync]`, 10*time.Second)
	var st struct {
		Status string `json:"status"`
		Traces []struct {
			Records int `json:"records"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil || st.Status != "paused" {
		t.Fatalf("status %+v %v", st, err)
	}
	page := eval[[]int](t, ctx, `fwlab.traces.map(t => t.n)`)
	for i, tr := range st.Traces {
		if i >= len(page) || page[i] != tr.Records {
			t.Errorf("trace %d: the page holds %v records, the paused server %d", i, page, tr.Records)
		}
	}
	t.Logf("the page reached the server's %v records %.1f s after Pause", page, time.Since(t0).Seconds())
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestStartPageSweepControl: "sweep a parameter" offers the form's
// numeric parameters by their spec paths, checks the values as typed,
// posts the form's spec with the axes, shows a refused value under its
// axis, and opens the sweep's page.
func TestStartPageSweepControl(t *testing.T) {
	t.Parallel()
	base, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	ts := struct{ URL string }{base}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "toy-polygon")
	step(t, ctx, "open the sweep control", 5*time.Second, chromedp.Click(chromedp.CSS(`#sweep-card summary`)))
	waitFor(t, ctx, "the parameters", `document.querySelector('#sweep-card').open && Array.from(document.querySelectorAll('#sweep-param-0 option')).some(o => o.value === 'algorithms[0].rho')`, `document.querySelector('#sweep-param-0').innerHTML`, 5*time.Second)
	opts := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#sweep-param-0 option')).map(o => o.value)`)
	have := map[string]bool{}
	for _, o := range opts {
		have[o] = true
	}
	for _, want := range []string{"seed", "iters", "params.samples", "algorithms[0].rho", "algorithms[0].algo", "algorithms[0].stepsize", "algorithms[0].L"} {
		if !have[want] {
			t.Errorf("the sweep's parameters %v lack %s", opts, want)
		}
	}
	if have["replications"] || have["start_paused"] {
		t.Errorf("the sweep's parameters %v hold one that cannot be swept", opts)
	}
	choose(t, ctx, "#sweep-param-0", "algorithms[0].rho")
	choose(t, ctx, "#sweep-values-0", "0.05, x")
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="axes[0]"]').textContent`); msg != `values: "x" is not a number` {
		t.Errorf("a value that is not a number: %q", msg)
	}
	choose(t, ctx, "#sweep-values-0", "0.05, -0.1")
	choose(t, ctx, "#sweep-param-1", "seed")
	choose(t, ctx, "#sweep-values-1", "1 2 3")
	if c := eval[string](t, ctx, `document.querySelector('#sweep-count').textContent`); !strings.HasPrefix(c, "6 cells × 1 replication") {
		t.Errorf("sweep size %q", c)
	}
	shot(t, ctx, dir, "start-sweep.png")
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the refusal", `document.querySelector('[data-error-for="axes[0]"]').textContent !== ''`, `document.querySelector('#sweep-error').textContent`, 5*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="axes[0]"]').textContent`); msg != "axes[0].values[1]: must lie strictly between 0 and 1, got -0.1" {
		t.Errorf("the server's refusal shows %q", msg)
	}
	for _, e := range errs.take() {
		if !strings.Contains(e, "400") || !strings.Contains(e, "/api/sweeps") {
			t.Errorf("console: %s", e)
		}
	}
	choose(t, ctx, "#sweep-values-0", "0.05, 0.1")
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the sweep page", `location.pathname.startsWith('/sweeps/') && window.fwlab && fwlab.sweep && fwlab.sweep.polls > 0`, `location.href`, 10*time.Second)
	// The one sweep the server holds is the one posted, with the form's
	// spec and the axes.
	var list struct{ Sweeps []struct{ ID string } }
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/sweeps"), &list); err != nil || len(list.Sweeps) != 1 {
		t.Fatalf("the server holds the sweeps %+v (%v), want one", list, err)
	}
	id := list.Sweeps[0].ID
	defer func() { // cancel the cells still to run
		if req, err := http.NewRequest("DELETE", ts.URL+"/api/sweeps/"+id, nil); err == nil {
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}
	}()
	if p := eval[string](t, ctx, `location.pathname`); p != "/sweeps/"+id {
		t.Errorf("the page opened %s, want the sweep %s", p, id)
	}
	body := getSweep(t, ts.URL, id)
	if body.Base.Problem != "toy-polygon" || len(body.Base.Algorithms) == 0 || len(body.Axes) != 2 ||
		body.Axes[0].Param != "algorithms[0].rho" || fmt.Sprint(body.Axes[0].Values) != "[0.05 0.1]" ||
		body.Axes[1].Param != "seed" || fmt.Sprint(body.Axes[1].Values) != "[1 2 3]" {
		t.Errorf("the server holds the sweep %+v", body)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestUploadLeavesNoStaleError: the instance preview asked for after the
// upload of x (x without y: refused with "y is needed with x") is answered
// just after y's upload is done, before the next preview is asked for. Its
// error is about values that have changed since: it must not be shown
// under y. The test's proxy holds the previews to make this order certain:
// the one without y until y is uploaded (and 100 ms more), the one with y
// for a second.
//
// It runs alone (no t.Parallel): the order it makes rests on held answers and a
// pause.
func TestUploadLeavesNoStaleError(t *testing.T) {
	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	yUploaded := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", testCSP)
		switch {
		case req.Method == "POST" && req.URL.Path == "/api/uploads":
			b, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(b))
			srv.ServeHTTP(w, req)
			if bytes.Contains(b, []byte(`filename="y.csv"`)) {
				once.Do(func() { close(yUploaded) })
			}
			return
		case req.Method == "POST" && req.URL.Path == "/api/preview":
			b, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(b))
			var pr struct {
				Params map[string]string `json:"params"`
			}
			_ = json.Unmarshal(b, &pr)
			if pr.Params["x"] != "" && pr.Params["y"] == "" {
				select {
				case <-yUploaded:
				case <-time.After(20 * time.Second):
				}
				time.Sleep(100 * time.Millisecond)
			} else if pr.Params["y"] != "" {
				time.Sleep(time.Second)
			}
		}
		srv.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	dir := t.TempDir()
	for name, body := range map[string]string{"x.csv": "1,0,2\n0,1,1\n1,1,0\n2,0,1\n", "y.csv": "3\n1\n2\n4\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := newBrowser(t)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "lasso")
	step(t, ctx, "choose x.csv", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-x-file"), []string{filepath.Join(dir, "x.csv")}))
	waitFor(t, ctx, "the upload of x", `document.querySelector('#p-lasso-x-file').dataset.state === 'done'`, `document.querySelector('#p-lasso-x-file').dataset.state`, 20*time.Second)
	// The preview of x alone is under way (held by the proxy).
	waitFor(t, ctx, "the preview of x alone", `document.querySelector('#instance-summary').dataset.state === 'loading'`, `document.querySelector('#instance-summary').dataset.state`, 5*time.Second)
	step(t, ctx, "choose y.csv", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-y-file"), []string{filepath.Join(dir, "y.csv")}))
	waitFor(t, ctx, "the upload of y", `document.querySelector('#p-lasso-y-file').dataset.state === 'done'`, `document.querySelector('#p-lasso-y-file').dataset.state`, 20*time.Second)
	// The held answer arrives 100 ms after the upload; the next preview is
	// answered a second after it is asked for.
	time.Sleep(600 * time.Millisecond)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="params.y"]').textContent`); msg != "" {
		t.Errorf("after y's upload the error under y is %q (the answer of a preview without y)", msg)
	}
	waitFor(t, ctx, "the instance measured", `fwlab.preview && fwlab.preview.answer && fwlab.preview.answer.samples === 4`, `fwlab.preview`, 20*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="params.y"]').textContent`); msg != "" {
		t.Errorf("with x and y uploaded the error under y is %q", msg)
	}
}

// TestCompareFollowsLiveRun: a run still live on the compare page is
// loaded again until it ends, so its curve grows.
func TestCompareFollowsLiveRun(t *testing.T) {
	t.Parallel()
	onBothStores(t, testCompareFollowsLiveRun)
}

func testCompareFollowsLiveRun(t *testing.T, be *backend) {
	base := be.url
	done := postRun(t, base, quickToy)
	live := postRun(t, base, longFista)
	defer stopRun(base, live)
	waitRunEnded(t, base, done)
	// on the cluster the live run waits for a worker: it is compared once it runs
	waitStatus(t, base, live, "running")
	be.checkRanHere(t, live)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(base+"/compare?runs="+done+","+live))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	first := eval[int](t, ctx, fmt.Sprintf(`fwlab.traces.filter(t => t.run === %q).reduce((a, t) => a + t.n, 0)`, live))
	waitFor(t, ctx, "the live run loaded again", fmt.Sprintf(`fwlab.compare.loads >= 2 && fwlab.traces.filter(t => t.run === %q).reduce((a, t) => a + t.n, 0) > %d && fwlab.charts.objective.drawn > 0`, live, first),
		`[fwlab.compare.loads, fwlab.traces]`, 20*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// contains says whether xs holds x.
func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestQueuedRunPanelsArrive: the page of a queued teaching run, whose
// status never carries the instance's panels, fetches them on their own and
// shows the teaching view once the run starts, following its iterates
// while it runs (a long run, so that no end of the run fetches them
// instead). TestWorkerRunPage covers an instance built after the page
// opened, on a worker.
func TestQueuedRunPanelsArrive(t *testing.T) {
	t.Parallel()
	ts := appWith(t, server.Options{Session: session.Options{MaxActive: 1}})
	first := postRun(t, ts.URL, longFista)
	defer stopRun(ts.URL, first)
	// About 14 s of solving on a quiet machine (ssfw-as reaches the
	// optimum of the 20 000-sample instance in 0.25 s, which a page under
	// load can miss entirely).
	second := postRun(t, ts.URL, `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"100000"},"algorithms":[{"algo":"ssfw-as","rho":0.001}],"iters":150000}`)
	defer stopRun(ts.URL, second)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the queued run", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+second))
	waitFor(t, ctx, "the queued status", `fwlab.status === 'queued'`, `fwlab.status`, 10*time.Second)
	if eval[bool](t, ctx, `!!(fwlab.teach && fwlab.teach.drawn)`) {
		t.Fatal("the teaching view is drawn before the instance exists")
	}
	stopRun(ts.URL, first)
	waitFor(t, ctx, "the teaching view of the running run", `fwlab.status === 'running' && !fwlab.done && fwlab.teach && fwlab.teach.drawn && fwlab.teach.planes && fwlab.teach.planes.length === 1 && fwlab.teach.ks.every((k) => k > 0)`,
		`[fwlab.status, fwlab.done, fwlab.teach]`, 30*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
