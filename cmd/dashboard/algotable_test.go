package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// Every algorithm of the table runs from the command line on every problem
// that offers it, and is refused, naming the field, on every other, from
// the command line and the API.
func TestAlgorithmTableFromCLIAndAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := startServe(t, ctx, false)
	defer func() { cancel(); <-done }()
	ran, refused := 0, 0
	defer func() { t.Logf("%d runs, %d refusals", ran, refused) }()
	for _, s := range scenarios.All() {
		for _, a := range spec.Algorithms {
			offered := slices.Contains(s.Algorithms, a.Name)
			if offered && s.Name == "ssvm-ocr" {
				continue // a full decoding pass of 6251 words per evaluation: scenarios' own tests run it
			}
			out, stderr, code := solve(t, "-problem", s.Name, "-algo", a.Name, "-iters", "2")
			switch {
			case offered && code != 0:
				t.Errorf("solve %s on %s: exit %d: %s", a.Name, s.Name, code, stderr)
			case offered && !strings.Contains(out, `"k":2`):
				t.Errorf("solve %s on %s: no record of iteration 2: %.300s", a.Name, s.Name, out)
			case !offered && (code == 0 || !strings.Contains(stderr, "-algo: ") || !strings.Contains(stderr, a.Name+" does not apply to problem "+s.Name)):
				t.Errorf("solve %s on %s: exit %d, %q: want a refusal naming -algo", a.Name, s.Name, code, stderr)
			}
			if offered {
				ran++
				continue
			}
			refused++
			body, _ := json.Marshal(spec.Run{Problem: s.Name, Algorithms: []spec.Algo{{Algo: a.Name}}, Iters: 2})
			resp, err := http.Post(url+"/api/runs", "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct{ Field, Error string }
			json.Unmarshal(msg, &e)
			if resp.StatusCode != http.StatusBadRequest || e.Field != "algorithms[0].algo" || !strings.Contains(e.Error, "does not apply to problem "+s.Name) {
				t.Errorf("POST %s on %s: %d %s", a.Name, s.Name, resp.StatusCode, msg)
			}
		}
	}
}
