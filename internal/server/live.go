package server

// Runs opened from outside (docs/live.md): a program fwlab does not run
// logs its iterates into the dashboard.
//
//	POST /api/live/runs               {"problem": label, "traces": [names], "fstar"?, "iters"?,
//	                                  "name"?, "note"?} → 201 {"id", "token", "page", "traces",
//	                                  "iters", "idle_timeout_s"}; 400 naming the field
//	                                  (traces[i] for a trace's name), 413 and 429 as POST
//	                                  /api/runs, 503 the store cannot write
//	POST /api/live/runs/{id}/records  Authorization: Bearer TOKEN; {"records": [record with
//	                                  "trace": name, …]} → 200 {"appended": n}; the batch is
//	                                  kept whole or not at all; 400 naming records[i].field
//	                                  and the rule, 401 no Bearer token (the scheme in any
//	                                  case), 403 a wrong one, 400 one sent twice, 404 no
//	                                  such run, 409 a run ended (or not opened from outside,
//	                                  or live on another server), 413 over MaxBody or
//	                                  MaxLiveBatch records
//	POST /api/live/runs/{id}/end      Authorization: Bearer TOKEN; {"status", "message"?} →
//	                                  200 {"id", "status"} once the end is stored; the
//	                                  answers of /records
//
// A run opened from outside is a session run (session/outside.go): its
// records go through the same trace store, run store appender and stream as
// any run's, and its status, trace, bundle, figure and compare are those of
// any run. The token is 32 random bytes (base64url); the server keeps only
// its SHA-256 and compares in constant time. The server's guard applies as
// to every request (Host allow-list, cross-origin protection, JSON bodies).

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// MaxLiveBatch bounds the records of one batch sent to a run opened from
// outside (the body is bounded by MaxBody too).
const MaxLiveBatch = 10_000

func (s *Server) liveRoutes(r chi.Router) {
	r.Post("/live/runs", s.handleLiveOpen)
	r.Post("/live/runs/{id}/records", s.handleLiveRecords)
	r.Post("/live/runs/{id}/end", s.handleLiveEnd)
}

// liveOpen is the body of POST /api/live/runs.
type liveOpen struct {
	Problem string   `json:"problem"`
	Traces  []string `json:"traces"`
	FStar   *float64 `json:"fstar"`
	Iters   int      `json:"iters"`
	Name    string   `json:"name"`
	Note    string   `json:"note"`
}

// liveField names a spec field as the open request does: algorithms[i].algo
// is traces[i].
func liveField(f string) string {
	if rest, ok := strings.CutPrefix(f, "algorithms"); ok {
		return "traces" + strings.TrimSuffix(rest, ".algo")
	}
	return f
}

func (s *Server) handleLiveOpen(w http.ResponseWriter, r *http.Request) {
	if s.refuseDegraded(w) {
		return
	}
	var req liveOpen
	if !s.liveDecode(w, r, &req, "open request") {
		return
	}
	for _, f := range []struct {
		field, v string
		max      int
	}{{"name", req.Name, store.MaxName}, {"note", req.Note, store.MaxNote}} {
		if !utf8.ValidString(f.v) || strings.IndexByte(f.v, 0) >= 0 {
			writeError(w, http.StatusBadRequest, f.field, "must be valid UTF-8 without the NUL character")
			return
		}
		if n := utf8.RuneCountInString(f.v); n > f.max {
			writeError(w, http.StatusBadRequest, f.field, fmt.Sprintf("must be at most %d characters, got %d", f.max, n))
			return
		}
	}
	if req.Traces == nil {
		writeError(w, http.StatusBadRequest, "traces", "is required: the names of the run's traces (one per algorithm logged)")
		return
	}
	sp := spec.Run{Outside: true, Problem: req.Problem, Iters: req.Iters}
	if req.Iters < 0 {
		writeError(w, http.StatusBadRequest, "iters", fmt.Sprintf("must be between 1 and %d (the largest k a trace may log; 0: %d), got %d", spec.MaxIters, spec.DefaultOutsideIters, req.Iters))
		return
	}
	for _, name := range req.Traces {
		sp.Algorithms = append(sp.Algorithms, spec.Algo{Algo: name})
	}
	if err := sp.Normalize(); err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, liveField(fe.Field), fe.Msg)
			return
		}
		writeError(w, http.StatusBadRequest, "", err.Error())
		return
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		writeError(w, http.StatusInternalServerError, "", "drawing a write token: "+err.Error())
		return
	}
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	run, err := s.mgr.OpenOutside(r.Context(), sp, req.FStar, clientAddr(r), session.HashToken(token))
	if err != nil {
		var fe *spec.FieldError
		switch {
		case errors.As(err, &fe):
			writeError(w, http.StatusBadRequest, liveField(fe.Field), fe.Msg)
		case errors.Is(err, session.ErrBusy):
			writeError(w, http.StatusTooManyRequests, "", err.Error())
		case errors.Is(err, session.ErrTooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, "iters", err.Error())
		default:
			writeError(w, http.StatusServiceUnavailable, "", err.Error())
		}
		return
	}
	// the store named the run by its problem and traces when it was put;
	// a name or note the program gave replaces that
	var e store.Edit
	if req.Name != "" {
		e.Name = &req.Name
	}
	if req.Note != "" {
		e.Note = &req.Note
	}
	if e.Name != nil || e.Note != nil {
		if err := s.st.Update(r.Context(), run.ID, e); err != nil {
			s.log.Warn("naming the run", "run", run.ID, "err", err)
		}
	}
	w.Header().Set("Location", "/api/runs/"+run.ID)
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": run.ID, "token": token, "page": "/runs/" + run.ID, "traces": run.Labels(), "iters": sp.Iters,
		"idle_timeout_s": s.mgr.Options().OutsideIdle.Seconds(),
	})
}

// liveRun finds the run open from outside that the request writes to and
// checks its token, or answers why it cannot be written.
func (s *Server) liveRun(w http.ResponseWriter, r *http.Request) (*session.Run, bool) {
	id := chi.URLParam(r, "id")
	run, ok := s.mgr.Live(id)
	if !ok || !run.Outside() {
		stored, found := s.mgr.Get(id)
		switch {
		case !found:
			writeError(w, http.StatusNotFound, "id", fmt.Sprintf("no run %s", quote(id)))
		case !stored.Spec().Outside:
			writeError(w, http.StatusConflict, "id", fmt.Sprintf("run %s was not opened from outside: only such a run takes records (POST /api/live/runs opens one)", id))
		case store.Live(stored.RunStatus()):
			writeError(w, http.StatusConflict, "id", fmt.Sprintf("run %s is held by another server sharing the run store: send its records to the server that opened it", id))
		default:
			writeError(w, http.StatusConflict, "id", fmt.Sprintf("run %s has ended (%s): it takes no more records", id, stored.RunStatus()))
		}
		return nil, false
	}
	auth := r.Header.Get("Authorization")
	// the scheme's name is case-insensitive (RFC 9110, 11.1); the token
	// is taken as sent, spaces included
	bearer := len(auth) > len("Bearer ") && strings.EqualFold(auth[:len("Bearer ")], "Bearer ")
	token := ""
	if bearer {
		token = auth[len("Bearer "):]
	}
	if len(r.Header.Values("Authorization")) > 1 {
		writeError(w, http.StatusBadRequest, "Authorization", "must be sent once")
		return nil, false
	}
	if !bearer {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fwlab"`)
		writeError(w, http.StatusUnauthorized, "Authorization", "is required: \"Bearer TOKEN\", the token POST /api/live/runs answered when the run was opened")
		return nil, false
	}
	if !run.TokenMatches(token) {
		writeError(w, http.StatusForbidden, "Authorization", fmt.Sprintf("the token is not run %s's write token", id))
		return nil, false
	}
	return run, true
}

func (s *Server) handleLiveRecords(w http.ResponseWriter, r *http.Request) {
	run, ok := s.liveRun(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the batch of records must be at most %d bytes%s: send fewer records at once", s.opts.MaxBody, s.opts.flag("MaxBody")))
		} else {
			writeError(w, http.StatusBadRequest, "", "reading the request body: "+err.Error())
		}
		return
	}
	recs, fail := parseBatch(body, run)
	if fail != nil {
		writeError(w, fail.code, fail.field, fail.msg)
		return
	}
	if err := run.AppendOutside("records", recs); err != nil {
		s.liveError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"appended": len(recs)})
}

// batchError is why a batch of records is refused.
type batchError struct {
	code       int
	field, msg string
}

func badBatch(field, format string, args ...any) *batchError {
	return &batchError{http.StatusBadRequest, field, fmt.Sprintf(format, args...)}
}

// batchSyntax names a failure of the JSON itself.
func batchSyntax(err error) *batchError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return badBatch("", "the body is not valid JSON (offset %d): %v", se.Offset, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return badBatch("", "the body ends early: the batch of records is not a whole JSON object")
	}
	return badBatch("", "the body is not a valid batch of records: %v", err)
}

// parseBatch reads {"records": [record, …]} in one pass, each record an
// object with its "trace" and the fields bundle.ParseRecord reads, and
// returns the records or why the batch is refused (naming records[i] and
// the field).
func parseBatch(body []byte, run *session.Run) ([]session.OutsideRecord, *batchError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil {
		return nil, batchSyntax(err)
	} else if t != json.Delim('{') {
		return nil, badBatch("", `the body must be a JSON object {"records": […]}`)
	}
	var recs []session.OutsideRecord
	seen := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, batchSyntax(err)
		}
		if key, _ := t.(string); key != "records" {
			return nil, badBatch(fmt.Sprint(t), "unknown field (check its spelling)")
		}
		if seen {
			return nil, badBatch("records", "appears twice")
		}
		seen = true
		if t, err := dec.Token(); err != nil {
			return nil, batchSyntax(err)
		} else if t != json.Delim('[') {
			return nil, badBatch("records", "must be an array of records, each with its \"trace\"")
		}
		for i := 0; dec.More(); i++ {
			p := "records[" + strconv.Itoa(i) + "]"
			if i >= MaxLiveBatch {
				return nil, &batchError{http.StatusRequestEntityTooLarge, "records", fmt.Sprintf("a batch holds at most %d records: send them in several", MaxLiveBatch)}
			}
			var raw map[string]json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					return nil, badBatch(p, "must be an object (a record with its \"trace\"), got %s", te.Value)
				}
				return nil, batchSyntax(err)
			}
			if raw == nil {
				return nil, badBatch(p, "must be an object (a record with its \"trace\"), got null")
			}
			rec, fail := parseRecord(p, raw, run)
			if fail != nil {
				return nil, fail
			}
			recs = append(recs, rec)
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, batchSyntax(err)
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, batchSyntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badBatch("", "the body must hold one JSON object, found more after it")
	}
	if !seen {
		return nil, badBatch("records", "is required: an array of records, each with its \"trace\"")
	}
	return recs, nil
}

// parseRecord reads one record of a batch: its trace by name, the rest as
// a bundle's record.
func parseRecord(p string, raw map[string]json.RawMessage, run *session.Run) (session.OutsideRecord, *batchError) {
	tr, ok := raw["trace"]
	if !ok {
		return session.OutsideRecord{}, badBatch(p+".trace", "is required: the name of the record's trace")
	}
	var name string
	if err := json.Unmarshal(tr, &name); err != nil {
		return session.OutsideRecord{}, badBatch(p+".trace", "must be a string (a trace's name), got %s", clipValue(tr))
	}
	idx, known := run.TraceIndex(name)
	if !known {
		return session.OutsideRecord{}, badBatch(p+".trace", "must be one of the run's traces (%s), got %s", strings.Join(run.Labels(), ", "), quote(name))
	}
	delete(raw, "trace")
	rec, err := bundle.ParseRecord(p, raw)
	if err != nil {
		var be *bundle.Error
		if errors.As(err, &be) {
			return session.OutsideRecord{}, badBatch(be.Path, "%s", be.Msg)
		}
		return session.OutsideRecord{}, badBatch(p, "%v", err)
	}
	return session.OutsideRecord{Trace: idx, Rec: rec}, nil
}

// liveEnd is the body of POST /api/live/runs/{id}/end.
type liveEnd struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func (s *Server) handleLiveEnd(w http.ResponseWriter, r *http.Request) {
	run, ok := s.liveRun(w, r)
	if !ok {
		return
	}
	var e liveEnd
	if !s.liveDecode(w, r, &e, "end") {
		return
	}
	if err := run.EndOutside(e.Status, e.Message); err != nil {
		s.liveError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": run.ID, "status": run.RunStatus()})
}

// liveError answers a refused write to a run opened from outside.
func (s *Server) liveError(w http.ResponseWriter, err error) {
	var fe *spec.FieldError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
	case errors.Is(err, session.ErrEnded):
		writeError(w, http.StatusConflict, "id", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "", err.Error())
	}
}

// liveDecode reads one JSON object with known fields only (at most MaxBody
// bytes) into v, answering why not (what names the body in messages).
func (s *Server) liveDecode(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the %s must be at most %d bytes%s: send fewer records at once", what, s.opts.MaxBody, s.opts.flag("MaxBody")))
		} else {
			writeError(w, http.StatusBadRequest, "", "reading the request body: "+err.Error())
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		msg := err.Error()
		switch {
		case errors.As(err, &te), errors.As(err, &se), strings.Contains(msg, "unknown field "):
			ae := jsonError(err)
			writeError(w, http.StatusBadRequest, ae.Field, ae.Error)
		case errors.Is(err, io.EOF):
			writeError(w, http.StatusBadRequest, "", "the body is empty: send the "+what+" as a JSON object")
		case errors.Is(err, io.ErrUnexpectedEOF):
			writeError(w, http.StatusBadRequest, "", "the body ends early: the "+what+" is not a whole JSON object")
		default:
			writeError(w, http.StatusBadRequest, "", "the body is not a valid "+what+": "+msg)
		}
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "", "the body must hold one JSON object, found more after it")
		return false
	}
	return true
}

// clipValue quotes a few characters of a raw JSON value for an error.
func clipValue(m json.RawMessage) string {
	if len(m) == 0 {
		return "nothing"
	}
	return quote(string(m))
}
