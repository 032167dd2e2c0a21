package e2e

// A stand-in for the run store's HTTP API (GET/PATCH /api/runs…, POST
// /api/runs/delete and /api/runs/import, GET /api/sweeps/{id}), serving
// the JSON of the API contract from canned runs, so that the history,
// compare and sweep pages can be laid out and driven before a server with
// a store is at hand. Everything else goes to the real server. The tests
// that need a real store (restart, a sweep that runs) use the real server.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/web"
)

type fakeRun struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Note       string         `json:"note"`
	Starred    bool           `json:"starred"`
	Status     string         `json:"status"`
	Problem    string         `json:"problem"`
	Algorithms []string       `json:"algorithms"`
	Created    time.Time      `json:"created"`
	Ended      *time.Time     `json:"ended,omitempty"`
	Spec       map[string]any `json:"spec"`
	Params     map[string]any `json:"params"`
	Instance   map[string]any `json:"instance"`
	Final      []fakeFinal    `json:"final"`
	reps       int
	scale      float64 // the objective's scale, so that runs differ
}

type fakeFinal struct {
	Algo        string   `json:"algo"`
	Replication int      `json:"replication"`
	Objective   *float64 `json:"objective"`
	Gap         *float64 `json:"gap"`
	Status      string   `json:"status"`
}

const fakeIters = 200

// fakeRecord is record k of a replication of a canned run: F = scale·(1 +
// 1/(k+1)), gap = scale/(k+1), a drop step every 25 iterations.
func fakeRecord(trace, rep, k int, algo string, scale float64) map[string]any {
	step := "fw"
	if k%25 == 24 {
		step = "drop"
	}
	f := 1 + float64(rep)*0.1
	return map[string]any{
		"trace": trace, "algo": algo, "replication": rep, "k": k, "passes": float64(k) * 0.5, "time_s": float64(k) * 0.001,
		"step": step, "gamma": 1 / float64(k+2), "batch": 10, "active": 1 + k%5,
		"objective": scale * (1 + f/float64(k+1)), "gap": scale * f / float64(k+1),
	}
}

type fakeStore struct {
	mu      sync.Mutex
	runs    []*fakeRun
	polls   int
	deleted []string
	imports int
	sweeps  []json.RawMessage // the bodies of POST /api/sweeps
}

func newFakeStore() *fakeStore {
	fs := &fakeStore{}
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	add := func(id, problem string, algos []string, status, name, note string, reps int, scale float64, params map[string]any, rho float64) {
		spec := map[string]any{"problem": problem, "params": params, "seed": 0, "iters": fakeIters, "replications": reps}
		var as []any
		for _, a := range algos {
			row := map[string]any{"algo": a}
			if a == "ssfw-as" {
				row["schedule"] = "paper"
				row["rho"] = rho
			}
			as = append(as, row)
		}
		spec["algorithms"] = as
		r := &fakeRun{ID: id, Name: name, Note: note, Status: status, Problem: problem, Algorithms: algos, Created: t0.Add(time.Duration(len(fs.runs)) * time.Hour),
			Spec: spec, Params: map[string]any{"replications": reps, "iters": fakeIters, "seed": 0}, Instance: map[string]any{"dim": 2, "samples": 1000, "blocks": 1, "fstar": nil}, reps: reps, scale: scale}
		for k, v := range params {
			r.Params[k] = v
		}
		if status != "running" {
			e := r.Created.Add(time.Minute)
			r.Ended = &e
		}
		for _, a := range algos {
			for rep := 0; rep < reps; rep++ {
				last := fakeRecord(0, rep, fakeIters-1, a, scale)
				obj, gap := last["objective"].(float64), last["gap"].(float64)
				r.Final = append(r.Final, fakeFinal{Algo: a, Replication: rep, Objective: &obj, Gap: &gap, Status: "max_iters"})
			}
		}
		fs.runs = append(fs.runs, r)
	}
	add("aaaaaaaaaaa1", "toy-polygon", []string{"ssfw-as", "fista"}, "done", "zig-zag baseline", "first try", 2, 1, map[string]any{"n": 1000}, 0.1)
	add("aaaaaaaaaaa2", "toy-polygon", []string{"ssfw-as", "fista"}, "done", "", "rho halved", 2, 1, map[string]any{"n": 1000}, 0.05)
	add("aaaaaaaaaaa3", "simplex", []string{"afw"}, "failed", "", "", 1, 3, map[string]any{"n": 50}, 0)
	add("aaaaaaaaaaa4", "lasso", []string{"ssfw-as"}, "interrupted", "lasso long", "", 1, 2, map[string]any{"n": 300, "p": 50}, 0.2)
	add("aaaaaaaaaaa5", "toy-polygon", []string{"fw"}, "cancelled", "", "", 1, 1.5, map[string]any{"n": 500}, 0)
	return fs
}

func (fs *fakeStore) find(id string) *fakeRun {
	for _, r := range fs.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func fakeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (fs *fakeStore) routes(r chi.Router) {
	r.Get("/api/runs", func(w http.ResponseWriter, req *http.Request) {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		q := req.URL.Query()
		var out []*fakeRun
		for i := len(fs.runs) - 1; i >= 0; i-- { // newest first
			r := fs.runs[i]
			if p := q.Get("problem"); p != "" && r.Problem != p {
				continue
			}
			if a := q.Get("algo"); a != "" && !contains(r.Algorithms, a) {
				continue
			}
			if s := q.Get("status"); s != "" && r.Status != s {
				continue
			}
			if s := strings.ToLower(q.Get("q")); s != "" && !strings.Contains(strings.ToLower(r.Name+" "+r.Note), s) {
				continue
			}
			out = append(out, r)
		}
		off, _ := strconv.Atoi(q.Get("offset"))
		lim, _ := strconv.Atoi(q.Get("limit"))
		if lim <= 0 {
			lim = 50
		}
		total := len(out)
		out = out[min(off, total):min(off+lim, total)]
		if out == nil {
			out = []*fakeRun{}
		}
		fakeJSON(w, 200, map[string]any{"runs": out, "total": total, "offset": off, "limit": lim, "disk_bytes": 123456 * len(fs.runs)})
	})
	r.Patch("/api/runs/{id}", func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
			fakeJSON(w, 415, map[string]any{"error": "JSON only"})
			return
		}
		fs.mu.Lock()
		defer fs.mu.Unlock()
		r := fs.find(chi.URLParam(req, "id"))
		if r == nil {
			fakeJSON(w, 404, map[string]any{"error": "no such run", "field": "id"})
			return
		}
		var body struct {
			Name    *string `json:"name"`
			Note    *string `json:"note"`
			Starred *bool   `json:"starred"`
		}
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			fakeJSON(w, 400, map[string]any{"error": err.Error()})
			return
		}
		if body.Name != nil {
			r.Name = *body.Name
		}
		if body.Note != nil {
			r.Note = *body.Note
		}
		if body.Starred != nil {
			r.Starred = *body.Starred
		}
		fakeJSON(w, 200, r)
	})
	r.Post("/api/runs/delete", func(w http.ResponseWriter, req *http.Request) {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		var body struct{ IDs []string }
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil || req.Header.Get("Content-Type") != "application/json" {
			fakeJSON(w, 400, map[string]any{"error": "want {\"ids\": […]} as JSON", "field": "ids"})
			return
		}
		n := 0
		for _, id := range body.IDs {
			for i, r := range fs.runs {
				if r.ID == id {
					fs.runs = append(fs.runs[:i], fs.runs[i+1:]...)
					fs.deleted = append(fs.deleted, id)
					n++
					break
				}
			}
		}
		fakeJSON(w, 200, map[string]any{"deleted": n})
	})
	r.Post("/api/runs/import", func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			fakeJSON(w, 400, map[string]any{"error": "not JSON: " + err.Error(), "field": ""})
			return
		}
		if doc["format"] != "fwlab-bundle" {
			fakeJSON(w, 400, map[string]any{"error": "is required: this is not a run bundle", "field": "format"})
			return
		}
		if _, ok := doc["traces"].([]any); !ok {
			fakeJSON(w, 400, map[string]any{"error": "is required", "field": "traces"})
			return
		}
		fs.mu.Lock()
		defer fs.mu.Unlock()
		fs.imports++
		id := fmt.Sprintf("imported%04d", fs.imports)
		src := fs.runs[0]
		cp := *src
		cp.ID, cp.Name, cp.Created = id, "imported", src.Created.Add(1000*time.Hour)
		fs.runs = append(fs.runs, &cp)
		fakeJSON(w, 201, map[string]any{"id": id})
	})
	r.Get("/api/runs/{id}", func(w http.ResponseWriter, req *http.Request) {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		r := fs.find(chi.URLParam(req, "id"))
		if r == nil {
			fakeJSON(w, 404, map[string]any{"error": "no such run", "field": "id"})
			return
		}
		var traces []map[string]any
		for _, a := range r.Algorithms {
			for rep := 0; rep < r.reps; rep++ {
				traces = append(traces, map[string]any{"trace": len(traces), "algo": a, "replication": rep, "seed": rep, "status": "max_iters", "records": fakeIters, "summary": map[string]any{"objective": r.scale, "gap": 0.01}})
			}
		}
		fakeJSON(w, 200, map[string]any{"id": r.ID, "spec": r.Spec, "status": r.Status, "created": r.Created, "ended": r.Ended, "records": fakeIters * len(traces),
			"info": r.Instance, "traces": traces, "name": r.Name, "note": r.Note, "starred": r.Starred})
	})
	r.Get("/api/runs/{id}/trace", func(w http.ResponseWriter, req *http.Request) {
		fs.mu.Lock()
		r := fs.find(chi.URLParam(req, "id"))
		fs.mu.Unlock()
		if r == nil {
			fakeJSON(w, 404, map[string]any{"error": "no such run", "field": "id"})
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		tr := 0
		for _, a := range r.Algorithms {
			for rep := 0; rep < r.reps; rep++ {
				for k := 0; k < fakeIters; k++ {
					_ = enc.Encode(fakeRecord(tr, rep, k, a, r.scale))
				}
				tr++
			}
		}
	})
	// POST /api/sweeps: a negative value is refused naming it, as the
	// server names a value whose cell spec fails validation.
	r.Post("/api/sweeps", func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var body struct {
			Base map[string]any `json:"base"`
			Axes []struct {
				Param  string    `json:"param"`
				Values []float64 `json:"values"`
			} `json:"axes"`
		}
		if req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &body) != nil || body.Base == nil || len(body.Axes) == 0 || len(body.Axes) > 2 {
			fakeJSON(w, 400, map[string]any{"error": "want {base, axes} as JSON", "field": "axes"})
			return
		}
		fs.mu.Lock()
		fs.sweeps = append(fs.sweeps, b)
		fs.mu.Unlock()
		for i, a := range body.Axes {
			for j, v := range a.Values {
				if v < 0 {
					fakeJSON(w, 400, map[string]any{"error": "must be ≥ 0", "field": fmt.Sprintf("axes[%d].values[%d]", i, j)})
					return
				}
			}
		}
		fakeJSON(w, 201, map[string]any{"id": "sw1"})
	})
	// A 3 × 2 sweep over rho and r that ends after a few polls: cells end
	// one per poll.
	r.Get("/api/sweeps/{id}", func(w http.ResponseWriter, req *http.Request) {
		fs.mu.Lock()
		fs.polls++
		polls := fs.polls
		fs.mu.Unlock()
		rhos := []float64{0.05, 0.1, 0.2}
		rs := []int{1, 5}
		one := chi.URLParam(req, "id") == "oneaxis"
		if one {
			rs = []int{1}
		}
		var cells []map[string]any
		done := 0
		for j, rr := range rs {
			for i, rho := range rhos {
				n := len(cells)
				st := "running"
				var sum map[string]any
				if n < polls {
					st = "done"
					done++
					gap := rho * float64(rr) * 1e-3
					passes := 10 / rho / float64(rr)
					sum = map[string]any{"final_objective": 1 + gap, "final_gap": gap, "passes_to_gap": passes, "seconds_to_gap": passes / 100}
					if i == 2 && j == 1 {
						sum["passes_to_gap"] = nil // never reached
					}
				}
				values := map[string]any{"algorithms[0].rho": rho}
				if !one {
					values["algorithms[0].r"] = rr
				}
				cells = append(cells, map[string]any{"values": values, "run": fmt.Sprintf("cell%d", n), "status": st, "summary": sum})
			}
		}
		status := "running"
		if done == len(cells) {
			status = "done"
		}
		axes := []map[string]any{{"param": "algorithms[0].rho", "values": rhos}}
		if !one {
			axes = append(axes, map[string]any{"param": "algorithms[0].r", "values": rs})
		}
		fakeJSON(w, 200, map[string]any{"id": chi.URLParam(req, "id"), "status": status, "created": time.Now().UTC(), "axes": axes,
			"base": map[string]any{"problem": "toy-polygon", "replications": 2, "algorithms": []any{map[string]any{"algo": "ssfw-as"}}}, "cells": cells})
	})
	// GET /api/sweeps/{id}/cells: the stand-in has no replications' rows.
	r.Get("/api/sweeps/{id}/cells", func(w http.ResponseWriter, req *http.Request) {
		fakeJSON(w, 200, map[string]any{"sweep": chi.URLParam(req, "id"), "rows": []any{}})
	})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fakeApp serves the pages and the fake store's API in front of the real
// server, under the browser tests' content security policy.
func fakeApp(t *testing.T) (*httptest.Server, *fakeStore) {
	t.Helper()
	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	fs := newFakeStore()
	r := chi.NewRouter()
	web.Mount(r, web.Deps{})
	fs.routes(r)
	rest := func(w http.ResponseWriter, req *http.Request) {
		srv.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), chi.RouteCtxKey, nil)))
	}
	r.NotFound(rest)
	r.MethodNotAllowed(rest)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", testCSP)
		r.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	return ts, fs
}

// medianOf is the median of xs (the sweep cells' outcome).
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
