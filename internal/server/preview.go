package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
)

// POST /api/preview builds the instance a run would build from a problem,
// its parameters and a seed, and answers its size, so that the start page
// can show p, n and q (the blocks, e.g. GFLASSO's connected components,
// which depend on the data and the threshold) while the user edits them:
//
//	{"problem": NAME, "params": {...}, "seed": S}
//	→ 200 {"dim": p, "samples": n, "blocks": q, "fstar": F* or null, "memory_bytes": B}
//	→ 400 {"error", "field"} with the words a run would give, or when the
//	  instance's expected size (known from the parameters for most
//	  problems) exceeds the memory budget: then it is not built
//	→ 504 when the build takes longer than Options.PreviewTimeout
//
// The last PreviewCache answers are kept by (problem, parameter values with
// the defaults filled in, seed), so that typing back and forth rebuilds
// nothing; a build already under way for the same key is joined rather than
// repeated, and at most previewBuilders builds run at once.

// Defaults of the preview.
const (
	DefaultPreviewTimeout = 10 * time.Second
	DefaultPreviewCache   = 16
	previewBuilders       = 2
)

// previewRequest is the body of POST /api/preview: the run spec's words.
type previewRequest struct {
	Problem string      `json:"problem"`
	Params  spec.Params `json:"params,omitempty"`
	Seed    int64       `json:"seed"`
}

// Preview is the answer of POST /api/preview: the instance's Info without
// its panels.
type Preview struct {
	Dim     int      `json:"dim"`
	Samples int      `json:"samples"`
	Blocks  int      `json:"blocks"`
	FStar   *float64 `json:"fstar"`
	// Memory is what a run's instance counts in the server's memory
	// budget, in bytes.
	Memory int64 `json:"memory_bytes"`
}

// previewEntry is one cached (or in-flight) build.
type previewEntry struct {
	key  string
	done chan struct{} // closed when the build has finished
	info Preview
	err  error
}

// previews is the cache of recent previews, most recent last.
type previews struct {
	max  int
	sem  chan struct{}
	mu   sync.Mutex
	list []*previewEntry
	// builds counts the instances built (for tests and diagnostics).
	builds int
}

func newPreviews(max int) *previews {
	return &previews{max: max, sem: make(chan struct{}, previewBuilders)}
}

// get returns the entry for key, starting its build when there is none.
func (c *previews) get(key string, build func() (Preview, error)) *previewEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.list {
		if e.key == key {
			// Move to the back (most recently used).
			c.list = append(append(c.list[:i:i], c.list[i+1:]...), e)
			return e
		}
	}
	e := &previewEntry{key: key, done: make(chan struct{})}
	c.list = append(c.list, e)
	if len(c.list) > c.max {
		c.list = c.list[len(c.list)-c.max:]
	}
	go func() {
		c.sem <- struct{}{}
		c.mu.Lock()
		c.builds++
		c.mu.Unlock()
		e.info, e.err = build()
		<-c.sem
		close(e.done)
		if e.err != nil {
			// Only successes are kept: a failed build is retried next time
			// (its data file may have been fixed in the meantime).
			c.drop(e)
		}
	}()
	return e
}

func (c *previews) drop(e *previewEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.list {
		if x == e {
			c.list = append(c.list[:i:i], c.list[i+1:]...)
			return
		}
	}
}

// Builds returns the number of instances built for previews so far.
func (c *previews) Builds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}

func (s *Server) handlePreview(w http.ResponseWriter, r *http.Request) {
	var req previewRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the preview request must be at most %d bytes", s.opts.MaxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "", "reading the request body: "+err.Error())
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		e := jsonError(err)
		writeError(w, http.StatusBadRequest, e.Field, e.Error)
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "", "the body must hold one JSON object, found more after it")
		return
	}
	if req.Seed < 0 {
		writeError(w, http.StatusBadRequest, "seed", fmt.Sprintf("must be non-negative, got %d", req.Seed))
		return
	}
	sc, vals, err := s.mgr.ResolveParams(req.Problem, req.Params)
	if err != nil {
		writeFieldError(w, err)
		return
	}
	canon, err := json.Marshal(vals) // map keys sorted: one key per set of values
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "encoding the parameters: "+err.Error())
		return
	}
	// The expected size, known before the build for most problems: an
	// instance over the memory budget is refused without building it.
	expected := sc.ExpectedBytes(vals)
	if budget := s.mgr.Options().MaxMemory; expected > budget {
		msg := fmt.Sprintf("the instance would take about %d MiB, more than the server's memory budget of %d MiB", expected>>20, budget>>20)
		if f := s.mgr.Options().Flags["MaxMemory"]; f != "" {
			msg += " (" + f + ")"
		}
		writeError(w, http.StatusBadRequest, "params", msg)
		return
	}
	key := fmt.Sprintf("%s\x00%d\x00%s", sc.Name, req.Seed, canon)
	timeout := s.opts.PreviewTimeout
	e := s.previews.get(key, func() (Preview, error) {
		// The build outlives a request that gives up, so that its answer
		// is cached for the next one; it has its own deadline.
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		inst, err := session.BuildInstance(ctx, sc, vals, req.Seed)
		if err != nil {
			return Preview{}, err
		}
		info := inst.Info()
		return Preview{Dim: info.Dim, Samples: info.Samples, Blocks: info.Blocks, FStar: info.FStar, Memory: session.InstanceBytes(inst)}, nil
	})
	wait, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	select {
	case <-e.done:
	case <-wait.Done():
		writeError(w, http.StatusGatewayTimeout, "", fmt.Sprintf("building the %s instance takes longer than %v, the limit of a preview; a run builds it without that limit", sc.Name, timeout))
		return
	}
	if e.err != nil {
		writeFieldError(w, e.err)
		return
	}
	writeJSON(w, http.StatusOK, e.info)
}

// writeFieldError answers 400 for a *spec.FieldError, 504 for a build cut
// by its deadline, 500 otherwise.
func writeFieldError(w http.ResponseWriter, err error) {
	var fe *spec.FieldError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "", err.Error())
	}
}
