package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// Backend is the run store as the layers above it use it: the methods of
// *Store that sessions, the server and the commands call. Two
// implementations keep the same behaviour, checked by one conformance
// suite (internal/store/storetest): this package's SQLite Store, the
// default, and internal/store/pgstore on PostgreSQL (ARCHITECTURE.md, "Many machines").
//
// What differs between them is said by the implementations: who owns the
// live runs (Owner, Recovered), what IntegrityCheck examines and what
// DiskUsage counts.
type Backend interface {
	// runs
	PutRun(ctx context.Context, r *Run) (string, error)
	AppendRecords(ctx context.Context, id string, trace int, recs []solver.Record) error
	// AppendBatches is AppendRecords of batches already encoded (each the
	// blob a BatchEncoder wrote), appended in order in one transaction:
	// all of them or none.
	AppendBatches(ctx context.Context, id string, trace int, bs []Batch) error
	SetStatus(ctx context.Context, id, status string, ended time.Time) error
	SetMessage(ctx context.Context, id, msg string) error
	SetTrace(ctx context.Context, id string, trace int, r TraceResult) error
	EndRun(ctx context.Context, id string, e Ending) error
	SetInstance(ctx context.Context, id string, in Instance) error
	Update(ctx context.Context, id string, e Edit) error
	Get(ctx context.Context, id string) (*Run, error)
	GetLean(ctx context.Context, id string) (*Run, error)
	TracePanels(ctx context.Context, id string, trace int, max int64) (json.RawMessage, error)
	User(ctx context.Context, id string) (name, note string, starred bool, err error)
	List(ctx context.Context, f Filter) ([]*Run, int, error)
	ListPage(ctx context.Context, f Filter) (*Page, error)
	Records(ctx context.Context, id string, trace, from, to int) ([]solver.Record, error)
	EachRecord(ctx context.Context, id string, trace, from, to int, fn func(i int, r *solver.Record) error) error
	Delete(ctx context.Context, ids ...string) (int, error)
	Trim(ctx context.Context, keep int) (int, error)

	// sweeps
	PutSweep(ctx context.Context, sw *Sweep) (string, error)
	SetSweepStatus(ctx context.Context, id, status string) error
	SetCellRun(ctx context.Context, id string, cell int, runID string) error
	GetSweep(ctx context.Context, id string) (*Sweep, error)
	ListSweeps(ctx context.Context, offset, limit int) ([]*Sweep, int, error)
	DeleteSweep(ctx context.Context, id string) error
	UpdateSweep(ctx context.Context, id string, e Edit) error
	CellsOf(ctx context.Context, runIDs ...string) (map[string]CellOf, error)

	// verifications: re-runs of a stored run compared with it
	AddVerification(ctx context.Context, v *Verification) (string, error)
	Verifications(ctx context.Context, runID string) ([]Verification, error)
	LastVerifications(ctx context.Context, runIDs []string) (map[string]Verification, error)

	// the names uploads were sent with (uploadnames.go)
	SetUploadName(ctx context.Context, sum, name string) error
	UploadNames(ctx context.Context, keys []string) (map[string]string, error)
	ForgetUploadNames(ctx context.Context, sums []string) error

	// the store itself
	Path() string  // where the store is, for messages (no password)
	Health() error // nil, or why the store cannot write now
	Owner() bool
	Recovered() int
	IntegrityCheck(ctx context.Context) error
	DiskUsage(ctx context.Context) (int64, error)
	Close() error
}

var _ Backend = (*Store)(nil)
