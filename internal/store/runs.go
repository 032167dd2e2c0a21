package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Run statuses (ARCHITECTURE.md, "Nothing is lost silently").
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusPaused      = "paused"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted"
)

// Statuses lists every run status.
var Statuses = []string{StatusQueued, StatusRunning, StatusPaused, StatusDone, StatusFailed, StatusCancelled, StatusInterrupted}

// Live reports whether a run with this status may still change.
func Live(status string) bool {
	return status == StatusQueued || status == StatusRunning || status == StatusPaused
}

func knownStatus(s string) bool {
	for _, t := range Statuses {
		if s == t {
			return true
		}
	}
	return false
}

// Limits on what a user writes.
const (
	MaxName = 200    // characters of a run's name
	MaxNote = 10_000 // characters of a run's note
)

// Run is a stored run. List fills everything but the panels (Instance.Panels
// and Trace.Panels), which Get adds.
type Run struct {
	ID       string
	Spec     spec.Run
	Instance Instance
	Version  string // the fwlab version that made the run
	Name     string
	Note     string
	Starred  bool
	Status   string
	Created  time.Time
	Ended    time.Time // zero until the run ends
	Traces   []Trace   // in index order
	// Message says why the run ended as it did when its traces do not
	// (SetMessage; PutRun ignores it).
	Message string
	// Outside marks a run opened from outside (docs/live.md): its records
	// came from a program fwlab does not run. PutRun and an import take it
	// from Spec.Outside.
	Outside bool
	// TokenHash is the SHA-256 of an outside run's write token: PutRun
	// stores it, reads leave it empty.
	TokenHash []byte
}

// Instance summarises the problem instance of a run (scenarios.Info).
type Instance struct {
	Dim     int
	Samples int
	Blocks  int
	FStar   *float64        // the optimal value where known
	Panels  json.RawMessage // the instance's panels as a JSON object, or nil
}

// Trace is one (algorithm, replication) of a run.
type Trace struct {
	Index       int
	Algo        string
	Replication int
	Seed        int64
	Status      string          // a run status while live, then the solver's (converged, max_iters, …)
	Records     int             // records appended so far
	Summary     *solver.Summary // set when the trace has ended
	Panels      json.RawMessage // the final estimate's panels (a JSON object), or nil
	HasPanels   bool            // the trace has panels (set also where Panels is not loaded)
	PanelsError string          // why a finished trace has no panels
}

// TraceResult is what SetTrace records when a trace ends.
type TraceResult struct {
	Status      string
	Summary     *solver.Summary
	Panels      json.RawMessage
	PanelsError string
}

// Ending is a run's end as EndRun writes it, in one transaction.
type Ending struct {
	Traces  map[int]TraceResult // by trace index: the traces' results
	Message string              // why the run ended as it did ("": none)
	Status  string              // the run's final status
	Ended   time.Time           // when it ended (zero: not known)
}

// Check reports what is wrong with an ending, naming the field.
func (e Ending) Check() error {
	if !knownStatus(e.Status) {
		return spec.Errorf("status", "must be one of %s, got %q", strings.Join(Statuses, ", "), e.Status)
	}
	return checkText("message", e.Message, MaxNote)
}

// TraceOrder returns the indexes of e.Traces in increasing order, the
// order both stores write them in.
func (e Ending) TraceOrder() []int {
	out := make([]int, 0, len(e.Traces))
	for i := range e.Traces {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// Edit changes a run's user fields; nil fields stay as they are.
type Edit struct {
	Name    *string
	Note    *string
	Starred *bool
}

// Filter selects runs for List. Empty fields do not filter.
type Filter struct {
	Problem   string
	Algorithm string // runs with at least one trace of this algorithm or of a variant of it (VariantSep)
	Status    string
	Text      string // substring of the name or the note, ASCII letters in either case
	Sweep     string // the runs of this sweep's cells
	// OldestFirst reverses the order: with Status queued, the queue in
	// the order the runs came.
	OldestFirst bool
	Offset      int
	Limit       int // 0: DefaultLimit; at most MaxLimit
	// After and Before ask for the page by cursor rather than by offset
	// (keyset.go): the Limit runs that follow the cursor in the list's
	// order, or that precede it. Last asks for the last Limit runs. At
	// most one of the three, and none with Offset.
	After, Before *Cursor
	Last          bool
}

// Page sizes of List.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

func micros(t time.Time) int64 { return t.UnixMicro() }

// now is the store's clock (when a run entered the store; what Trim
// spares as recent).
var now = time.Now

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// checkText checks a user's text (a name, a note, a message) on every
// store alike: valid UTF-8, at most max characters, and no NUL character
// (PostgreSQL's text cannot hold it, and a page would show a text cut at
// it), each refused naming field.
func checkText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return spec.Errorf(field, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return spec.Errorf(field, "must be at most %d characters, got %d", max, n)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return spec.Errorf(field, "must not contain the NUL character")
	}
	return nil
}

// checkInstance checks what the pages read of an instance summary: F*, when
// known, a finite number (JSON cannot carry NaN or an infinity, so a page
// could not read the run, nor any list that holds it), and the panels valid
// JSON.
func checkInstance(in Instance) error {
	if in.FStar != nil && (math.IsNaN(*in.FStar) || math.IsInf(*in.FStar, 0)) {
		return spec.Errorf("instance.fstar", "must be a finite number (the optimal value) or absent, got %v", *in.FStar)
	}
	return checkJSON("instance.panels", in.Panels)
}

func checkJSON(field string, m json.RawMessage) error {
	if m != nil && !json.Valid(m) {
		return spec.Errorf(field, "must be valid JSON")
	}
	return nil
}

// nullJSON stores nil (or JSON null) as SQL NULL.
func nullJSON(m json.RawMessage) any {
	if m == nil || string(m) == "null" {
		return nil
	}
	return string(m)
}

// tx runs fn in a transaction (BEGIN IMMEDIATE: writers queue on the busy
// timeout instead of failing on a lock upgrade); a storage failure makes
// the store degraded (Health).
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.noteWrite(s.rawTx(ctx, fn))
}

// exec runs one writing statement outside a transaction, noting a storage
// failure as tx does.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := s.db.ExecContext(ctx, q, args...)
	return res, s.noteWrite(err)
}

// rawTx is tx without noting failures.
func (s *Store) rawTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// summaryJSON stores a solver.Summary with its floats exact, non-finite
// ones included (see jsonFloat).
type summaryJSON struct {
	Objective jsonFloat `json:"objective"`
	Gap       jsonFloat `json:"gap"`
	Iters     int       `json:"iters"`
	Passes    jsonFloat `json:"passes"`
	Time      jsonFloat `json:"time_s"`
	Status    string    `json:"status"`
	Message   string    `json:"message"`
}

func marshalSummary(s *solver.Summary) ([]byte, error) {
	return json.Marshal(summaryJSON{jsonFloat(s.Objective), jsonFloat(s.Gap), s.Iters, jsonFloat(s.Passes), jsonFloat(s.Time), s.Status, s.Message})
}

func unmarshalSummary(b []byte) (*solver.Summary, error) {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decoding the stored summary: %w", err)
	}
	return &solver.Summary{Objective: float64(j.Objective), Gap: float64(j.Gap), Iters: j.Iters, Passes: float64(j.Passes),
		Time: float64(j.Time), Status: j.Status, Message: j.Message}, nil
}

// jsonFloat is a float64 in JSON as a number, or as the string "NaN", "Inf"
// or "-Inf" (the convention of fwlab's bundles).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = jsonFloat(math.NaN())
	case `"Inf"`:
		*f = jsonFloat(math.Inf(1))
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return fmt.Errorf("not a number: %.20s", b)
		}
		*f = jsonFloat(v)
	}
	return nil
}
