package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A run on one's own data, as a user makes it in the browser: the server's
// refusal names the user's files (as uploaded), never the server's path or
// the upload's hash; a good file uploaded after clears that refusal from the
// Start bar; the finished run's page lists each algorithm's largest
// coefficients, and its CSV download holds the whole vector, the same
// values.
func TestOwnDataNamesAndCoefficients(t *testing.T) {
	t.Parallel()
	url, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	files := map[string]string{
		"design.csv":  "1,0,2,0\n0,1,1,3\n1,1,0,1\n2,0,1,0\n0,2,2,1\n1,2,1,2\n3,1,0,1\n",
		"y_short.csv": "3\n1\n2\n4\n4\n",
		"y.csv":       "3\n1\n2\n4\n4\n3\n5\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	upload := func(field, name string) {
		t.Helper()
		step(t, ctx, "choose "+name+" for "+field, 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-"+field+"-file"), []string{filepath.Join(dir, name)}))
		waitFor(t, ctx, "the upload of "+name, fmt.Sprintf(`document.querySelector('#p-lasso-%s-file').dataset.state === 'done' && document.querySelector('[data-upload-status="params.%s"]').textContent.includes(%q)`, field, field, name),
			fmt.Sprintf(`[document.querySelector('#p-lasso-%s-file').dataset.state, document.querySelector('[data-error-for="params.%s"]').textContent]`, field, field), 20*time.Second)
	}
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(url+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "lasso")
	upload("x", "design.csv")
	upload("y", "y_short.csv")

	// Start: the server refuses 5 responses for 7 rows, naming both files.
	step(t, ctx, "start the run", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the refusal in the Start bar", `!document.querySelector('#error-summary').hidden && document.querySelector('#error-summary').textContent.includes('responses')`,
		`[document.querySelector('#error-summary').textContent, document.querySelector('#form-error').textContent, location.href]`, 30*time.Second)
	shown := eval[string](t, ctx, `document.querySelector('#error-summary').textContent + ' | ' + document.querySelector('#form-error').textContent + ' | ' + document.querySelector('[data-error-for="params.y"]').textContent`)
	for _, want := range []string{"y_short.csv has 5 responses", "design.csv has 7 rows"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the refusal %q does not say %q", shown, want)
		}
	}
	var bad []string
	for name, body := range files {
		sum := sha256.Sum256([]byte(body))
		bad = append(bad, hex.EncodeToString(sum[:])[:12])
		_ = name
	}
	for _, b := range append(bad, "upload:", os.TempDir(), "fwlab-uploads", "srv-") {
		if strings.Contains(shown, b) {
			t.Errorf("the refusal %q shows %q: the server's name of the file, not the user's", shown, b)
		}
	}

	// A good y: the refusal, about the file replaced, goes.
	upload("y", "y.csv")
	waitFor(t, ctx, "the refusal cleared", `document.querySelector('#error-summary').hidden && document.querySelector('[data-error-for="params.y"]').textContent === '' && document.querySelector('#form-error').textContent === ''`,
		`[document.querySelector('#error-summary').hidden, document.querySelector('#error-summary').textContent, document.querySelector('[data-error-for="params.y"]').textContent, document.querySelector('#form-error').textContent]`, 10*time.Second)

	step(t, ctx, "start the run again", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `[location.href, document.querySelector('#error-summary').textContent]`, 30*time.Second)
	id := eval[string](t, ctx, `fwlab.runId`)
	waitFor(t, ctx, "the run done", `fwlab.done === true && fwlab.status === 'done'`, `[fwlab.status]`, 120*time.Second)
	ntr := eval[int](t, ctx, `fwlab.groups.length`)
	waitFor(t, ctx, "a coefficient table per algorithm", fmt.Sprintf(`document.querySelectorAll('table.coefficients').length === %d`, ntr),
		`[document.querySelectorAll('table.coefficients').length, document.querySelector('#panels').hidden]`, 30*time.Second)

	type row struct {
		At    string
		Value string
	}
	var tables []struct {
		Trace string
		Href  string
		Rows  []row
	}
	if err := json.Unmarshal([]byte(eval[string](t, ctx, `JSON.stringify([...document.querySelectorAll('table.coefficients')].map(t => ({
		Trace: t.dataset.coefficients,
		Href: t.closest('figure').querySelector('a[data-coef-csv]').getAttribute('href'),
		Rows: [...t.tBodies[0].rows].map(r => ({At: r.cells[0].textContent, Value: r.cells[1].textContent}))})))`)), &tables); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if want := "/api/runs/" + id + "/traces/" + tb.Trace + "/coefficients.csv"; tb.Href != want {
			t.Errorf("trace %s: the download is %q, want %q", tb.Trace, tb.Href, want)
		}
		csv := strings.Fields(string(httpGet(t, url+tb.Href)))
		if len(csv) != 4 {
			t.Fatalf("trace %s: the CSV has %d values, want the 4 of design.csv's columns: %q", tb.Trace, len(csv), csv)
		}
		type coef struct {
			at int
			v  float64
		}
		var all []coef
		for i, s := range csv {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("trace %s: CSV line %d: %v", tb.Trace, i+1, err)
			}
			all = append(all, coef{i + 1, v})
		}
		sort.SliceStable(all, func(i, j int) bool { return math.Abs(all[i].v) > math.Abs(all[j].v) })
		if len(tb.Rows) != len(all) {
			t.Errorf("trace %s: the table lists %d coefficients, want all %d (fewer than it shows at most)", tb.Trace, len(tb.Rows), len(all))
		}
		if all[0].v == 0 {
			t.Errorf("trace %s: every coefficient is 0: %v", tb.Trace, all)
		}
		for i := 0; i < min(len(all), len(tb.Rows)); i++ {
			got, err := strconv.ParseFloat(strings.ReplaceAll(tb.Rows[i].Value, "−", "-"), 64)
			if err != nil || tb.Rows[i].At != strconv.Itoa(all[i].at) || math.Abs(got-all[i].v) > 1e-5*math.Max(1, math.Abs(all[i].v)) {
				t.Errorf("trace %s: row %d of the table is %+v, the CSV's %d-th largest is coefficient %d = %v", tb.Trace, i+1, tb.Rows[i], i+1, all[i].at, all[i].v)
			}
		}
	}
	for _, e := range errs.take() {
		// the refused Start (and the preview of the same data) are the
		// errors the page was meant to meet
		if strings.Contains(e, "status of 400") && (strings.HasSuffix(e, "/api/runs") || strings.HasSuffix(e, "/api/preview")) {
			continue
		}
		t.Errorf("console: %s", e)
	}
}
