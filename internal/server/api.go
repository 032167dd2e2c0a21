package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// apiError is the body of every API error.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

// writeError answers an API error; the message is clipped (clipMessage)
// and the field name bounded, so that no error body exceeds MaxErrorBody.
func writeError(w http.ResponseWriter, code int, field, msg string) {
	if len(field) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(field[cut]) {
			cut--
		}
		field = field[:cut] + "…"
	}
	writeJSON(w, code, apiError{Error: clipMessage(msg), Field: strings.ToValidUTF8(field, "\uFFFD")})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(apiError{Error: "encoding the response: " + err.Error()})
		code = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// run finds the run named by the {id} URL parameter, answering 404 if there
// is none.
func (s *Server) run(w http.ResponseWriter, r *http.Request) (*session.Run, bool) {
	id := chi.URLParam(r, "id")
	run, ok := s.mgr.Get(id)
	if ok {
		return run, true
	}
	writeError(w, http.StatusNotFound, "id", fmt.Sprintf("no run %s", quote(id)))
	return nil, false
}

// decodeSpec reads a run spec from the request body: one JSON object with
// known fields only, at most MaxBody bytes.
func (s *Server) decodeSpec(w http.ResponseWriter, r *http.Request) (spec.Run, int, *apiError) {
	var sp spec.Run
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return sp, http.StatusRequestEntityTooLarge, &apiError{Error: fmt.Sprintf("the run spec must be at most %d bytes", s.opts.MaxBody)}
		}
		return sp, http.StatusBadRequest, &apiError{Error: "reading the request body: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return sp, http.StatusBadRequest, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return sp, http.StatusBadRequest, &apiError{Error: "the body must hold one JSON object, found more after it"}
	}
	return sp, 0, nil
}

// jsonError names the field of a JSON decoding error where it can.
func jsonError(err error) *apiError {
	var fe *spec.FieldError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &fe):
		return &apiError{Error: fe.Msg, Field: fe.Field}
	case errors.As(err, &te):
		field := te.Field
		return &apiError{Error: fmt.Sprintf("must be a JSON %s, got %s", jsonKind(te.Type.Kind().String()), te.Value), Field: field}
	case errors.As(err, &se):
		return &apiError{Error: fmt.Sprintf("the body is not valid JSON (offset %d): %v", se.Offset, err)}
	case errors.Is(err, io.EOF):
		return &apiError{Error: "the body is empty; send a JSON run spec"}
	}
	msg := err.Error()
	if i := strings.Index(msg, "unknown field "); i >= 0 {
		name := strings.Trim(msg[i+len("unknown field "):], `"`)
		return &apiError{Error: "unknown field (check its spelling)", Field: name}
	}
	return &apiError{Error: "the body is not a valid run spec: " + msg}
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	}
	return k
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	if s.refuseDegraded(w) {
		return
	}
	sp, code, aerr := s.decodeSpec(w, r)
	if aerr != nil {
		writeError(w, code, aerr.Field, aerr.Error)
		return
	}
	if s.opts.Submit != nil {
		s.createQueued(w, r, sp)
		return
	}
	run, err := s.mgr.CreateFor(r.Context(), sp, clientAddr(r))
	if err != nil {
		var fe *spec.FieldError
		switch {
		case errors.As(err, &fe):
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
		case errors.Is(err, session.ErrBusy):
			writeError(w, http.StatusTooManyRequests, "", err.Error())
		case errors.Is(err, session.ErrTooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, "", err.Error())
		case errors.Is(err, context.DeadlineExceeded):
			writeError(w, http.StatusGatewayTimeout, "", fmt.Sprintf("%v: the build took longer than the request timeout of %v%s, and no run was made",
				err, s.opts.Timeout, s.opts.flag("Timeout")))
		default:
			writeError(w, http.StatusServiceUnavailable, "", err.Error())
		}
		return
	}
	w.Header().Set("Location", "/api/runs/"+run.ID)
	writeJSON(w, http.StatusCreated, map[string]string{"id": run.ID})
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	if run, ok := s.run(w, r); ok {
		writeJSON(w, http.StatusOK, s.statusWithUser(r.Context(), run).WithoutPanels())
	}
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	switch ok, err := s.cancelRemote(r.Context(), chi.URLParam(r, "id")); {
	case err != nil:
		s.storeError(w, err)
		return
	case ok:
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "cancelled"})
		return
	}
	if run, ok := s.run(w, r); ok {
		run.Cancel()
		writeJSON(w, http.StatusAccepted, map[string]string{"status": run.RunStatus()})
	}
}

// handleControl applies a pause, resume or step: 202 with the run's status,
// or 429 naming the budget when a resume or step does not fit (the run stays
// as it was).
func (s *Server) handleControl(op func(*session.Run) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if run, ok := s.run(w, r); ok {
			if run.Spec().Outside {
				writeError(w, http.StatusConflict, "id", fmt.Sprintf("run %s was opened from outside: its records come from the program that logs it, which the server cannot pause, resume or step", run.ID))
				return
			}
			if err := op(run); err != nil {
				writeError(w, http.StatusTooManyRequests, "", err.Error())
				return
			}
			writeJSON(w, http.StatusAccepted, run.Status().WithoutPanels())
		}
	}
}

func (s *Server) handlePanels(w http.ResponseWriter, r *http.Request) {
	if run, ok := s.run(w, r); ok {
		p := run.Info().Panels
		if p == nil {
			p = map[string]any{}
		}
		writeJSON(w, http.StatusOK, p)
	}
}

// handleTrace writes every record of every trace stored so far, tagged with
// trace, algo and replication: JSON Lines (default) or CSV. A download is
// whole or visibly broken: when a read fails before anything is sent the
// answer is a 500 naming the cause, and when one fails midway the
// connection is aborted (no terminating chunk), so that no client takes a
// cut trace for a complete one.
func (s *Server) handleTrace(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "jsonl"
	}
	if format != "jsonl" && format != "csv" {
		writeError(w, http.StatusBadRequest, "format", fmt.Sprintf("must be jsonl or csv, got %q", format))
		return
	}
	run, ok := s.run(w, r)
	if !ok {
		return
	}
	traces := run.Traces()
	lens := make([]int, len(traces))
	for i, t := range traces {
		lens[i] = t.Len() // a running trace grows: both passes see the same records
	}
	var extras []string
	if format == "csv" {
		var err error
		if extras, err = extraKeys(traces, lens); err != nil {
			s.log.Error("trace export", "run", run.ID, "err", err)
			writeError(w, http.StatusInternalServerError, "", "reading the run's records: "+err.Error())
			return
		}
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-trace.%s"`, run.ID, format))
	w.WriteHeader(http.StatusOK)
	// A download takes as long as it needs while it progresses: each
	// buffer must be written within WriteTimeout, whatever the server's
	// write timeout for other answers.
	bw := bufio.NewWriterSize(&progressWriter{w: w, rc: http.NewResponseController(w), d: s.opts.WriteTimeout}, 64<<10)
	if format == "csv" {
		_, _ = bw.Write(appendCSVHeader(nil, extras))
	}
	if err := writeTraces(bw, traces, lens, format, extras); err != nil {
		if errors.Is(err, errClientGone) {
			return
		}
		s.abort("trace export", run.ID, err)
	}
	if err := bw.Flush(); err != nil {
		return // the client went away
	}
}

// errClientGone marks a download whose client stopped reading.
var errClientGone = errors.New("the client went away")

// writeTraces writes the first lens[i] records of every trace; the error
// is errClientGone (wrapped) when a write failed, else the read's.
func writeTraces(bw *bufio.Writer, traces []*session.Trace, lens []int, format string, extras []string) error {
	var line []byte
	var werr error
	for i, t := range traces {
		tg := &tags{trace: t.Index, algo: t.Algo, replication: t.Replication}
		_, err := t.Walk(0, lens[i], func(_ int, rec *solver.Record) bool {
			if format == "csv" {
				line = appendCSV(line[:0], rec, tg, extras)
			} else {
				line = append(appendRecord(line[:0], rec, tg), '\n')
			}
			_, werr = bw.Write(line)
			return werr == nil
		})
		if werr != nil {
			return fmt.Errorf("%w: %w", errClientGone, werr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// abort ends a streamed answer whose source failed midway: the error is
// logged and the connection dropped without the terminating chunk, so the
// client sees a broken download rather than a short one that looks whole.
func (s *Server) abort(what, id string, err error) {
	s.log.Error(what+" cut short: the connection is aborted", "run", id, "err", err)
	panic(http.ErrAbortHandler)
}

// progressWriter extends the connection's write deadline before each write.
type progressWriter struct {
	w  io.Writer
	rc *http.ResponseController
	d  time.Duration
}

func (p *progressWriter) Write(b []byte) (int, error) {
	_ = p.rc.SetWriteDeadline(time.Now().Add(p.d))
	return p.w.Write(b)
}
