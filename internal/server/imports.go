package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/bundle"
)

// Imports (POST /api/runs/import) stream the bundle into the store as it
// arrives (package bundle's Import), at most MaxImports at once, each
// counted in the memory budget for ImportMemory. A bundle imported before
// answers 200 with the first run's id. An import still running after
// ImportWait is answered 202 with a status URL (/api/imports/{n}); the
// body is read to its end all the same, and the status URL then says how
// it ended.

const (
	// DefaultMaxImports bounds the imports running at once.
	DefaultMaxImports = 2
	// DefaultImportWait is how long an import may run before it is
	// answered 202 with a status URL.
	DefaultImportWait = 5 * time.Second
	// ImportMemory is what one import is counted for in the memory budget:
	// a chunk of records, the largest panel and the decoder's buffers.
	ImportMemory = 32 << 20
	// keptImports bounds the finished imports whose status is kept.
	keptImports = 256
)

// importJob is one import, while it runs and for a while after.
type importJob struct {
	n    int
	done chan struct{}
	// set before done is closed
	code   int
	answer any
}

// importer bounds the imports and keeps their status.
type importer struct {
	slots chan struct{}
	mu    sync.Mutex
	next  int
	jobs  map[int]*importJob
	order []int // finished, oldest first
}

func newImporter(max int) *importer {
	return &importer{slots: make(chan struct{}, max), jobs: map[int]*importJob{}}
}

func (im *importer) start() *importJob {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.next++
	j := &importJob{n: im.next, done: make(chan struct{})}
	im.jobs[j.n] = j
	return j
}

func (im *importer) finish(j *importJob, code int, answer any) {
	j.code, j.answer = code, answer
	close(j.done)
	im.mu.Lock()
	defer im.mu.Unlock()
	im.order = append(im.order, j.n)
	for len(im.order) > keptImports {
		delete(im.jobs, im.order[0])
		im.order = im.order[1:]
	}
}

func (im *importer) get(n int) (*importJob, bool) {
	im.mu.Lock()
	defer im.mu.Unlock()
	j, ok := im.jobs[n]
	return j, ok
}

// refuseDegraded answers 503 naming the store's write failure while the
// store cannot write; it reports whether it did.
func (s *Server) refuseDegraded(w http.ResponseWriter) bool {
	if err := s.st.Health(); err != nil {
		// (the write failure itself was logged where it happened)
		writeError(w, http.StatusServiceUnavailable, "", "the server takes no new runs while its run store cannot write: "+err.Error())
		return true
	}
	return false
}

// handleHealth answers 200 "ok", or 503 "degraded: …" naming the store's
// write failure.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.st.Health(); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("degraded: " + err.Error() + "\n"))
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// handleImport stores a bundle as a new run: 201 {"id"}; 200 {"id",
// "existing": true} for a bundle imported before; 202 {"status_url"} when
// it takes longer than ImportWait; 400 naming the field path of a
// malformed bundle; 413 over MaxImport; 429 over MaxImports or the memory
// budget; 503 while the store cannot write.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) {
	if s.refuseDegraded(w) {
		return
	}
	select {
	case s.imp.slots <- struct{}{}:
	default:
		writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("at most %d imports may run at once%s; retry when one has finished", cap(s.imp.slots), s.opts.flag("MaxImports")))
		return
	}
	defer func() { <-s.imp.slots }()
	release, err := s.mgr.Reserve(ImportMemory, "an import")
	if err != nil {
		writeError(w, http.StatusTooManyRequests, "", err.Error())
		return
	}
	defer release()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.UploadTimeout))
	_ = rc.SetWriteDeadline(time.Time{}) // the answer may come long after the request began
	_ = rc.EnableFullDuplex()            // a 202 goes out while the body is still read
	job := s.imp.start()
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxImport)
	go func() {
		code, answer := s.importAnswer(bundle.ImportInto(r.Context(), s.st, body))
		s.imp.finish(job, code, answer)
	}()
	timer := time.NewTimer(s.opts.ImportWait)
	defer timer.Stop()
	select {
	case <-job.done:
		s.writeImportAnswer(w, job)
		return
	case <-timer.C:
	}
	url := "/api/imports/" + strconv.Itoa(job.n)
	w.Header().Set("Location", url)
	// a whole answer (its length known), so that a client may read it
	// while it is still sending
	b, _ := json.Marshal(map[string]string{"status": "importing", "status_url": url})
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(b)
	_ = rc.Flush()
	<-job.done // the body stays readable until the import has read it
}

// importAnswer is the status code and body that end an import.
func (s *Server) importAnswer(res *bundle.Imported, err error) (int, any) {
	if err == nil {
		if res.Existing {
			return http.StatusOK, map[string]any{"id": res.ID, "existing": true}
		}
		return http.StatusCreated, map[string]any{"id": res.ID}
	}
	var mbe *http.MaxBytesError
	var be *bundle.Error
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, apiError{Error: fmt.Sprintf("a bundle may be at most %d bytes%s", s.opts.MaxImport, s.opts.flag("MaxImport"))}
	case errors.As(err, &be):
		return http.StatusBadRequest, apiError{Error: clipMessage(be.Msg), Field: be.Path}
	case s.st.Health() != nil:
		s.log.Error("import failed: the run store cannot write", "err", err)
		return http.StatusServiceUnavailable, apiError{Error: clipMessage("the run store cannot write: " + err.Error())}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusBadRequest, apiError{Error: "the import was cut short (the request ended) and nothing was kept"}
	}
	s.log.Error("import failed", "err", err)
	return http.StatusInternalServerError, apiError{Error: clipMessage("the run store failed: " + err.Error())}
}

func (s *Server) writeImportAnswer(w http.ResponseWriter, j *importJob) {
	if m, ok := j.answer.(map[string]any); ok {
		if id, ok := m["id"].(string); ok {
			w.Header().Set("Location", "/api/runs/"+id)
		}
	}
	writeJSON(w, j.code, j.answer)
}

// handleImportStatus answers an import's status: {"status": "importing"},
// or {"status": "done", "code", "id", "existing"?}, or {"status": "failed",
// "code", "error", "field"}; 404 for an unknown (or long finished) import.
func (s *Server) handleImportStatus(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(chi.URLParam(r, "id"))
	j, ok := s.imp.get(n)
	if err != nil || !ok {
		writeError(w, http.StatusNotFound, "id", "no such import (the status of the last "+strconv.Itoa(keptImports)+" imports is kept)")
		return
	}
	select {
	case <-j.done:
	default:
		writeJSON(w, http.StatusOK, map[string]any{"status": "importing"})
		return
	}
	out := map[string]any{"code": j.code}
	switch a := j.answer.(type) {
	case map[string]any:
		out["status"] = "done"
		for k, v := range a {
			out[k] = v
		}
	case apiError:
		out["status"] = "failed"
		out["error"], out["field"] = a.Error, a.Field
	}
	writeJSON(w, http.StatusOK, out)
}
