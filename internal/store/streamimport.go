package store

import (
	"context"

	"github.com/fwlab/fwlab/internal/solver"
)

// RunImport is one run streaming into a store (a bundle being read), as
// Import is for the SQLite store: its traces and records are stored as they
// come while the run stays invisible until Commit, which answers the run
// stored first for a digest stored before; Abort removes what was stored.
type RunImport interface {
	ID() string
	AddTrace(ctx context.Context, t Trace) error
	AppendRecords(ctx context.Context, trace int, recs []solver.Record) error
	EndTrace(ctx context.Context, t Trace, r TraceResult) error
	Commit(ctx context.Context, r *Run, digest string) (id string, existing bool, err error)
	Abort(ctx context.Context) error
}

// Importer is a store that takes runs as streams (both stores are).
type Importer interface {
	StreamImport(ctx context.Context) (RunImport, error)
}

// StreamImport is BeginImport as a RunImport.
func (s *Store) StreamImport(ctx context.Context) (RunImport, error) {
	im, err := s.BeginImport(ctx)
	if err != nil {
		return nil, err
	}
	return im, nil
}

// AppendRecords appends records to a trace of the import.
func (im *Import) AppendRecords(ctx context.Context, trace int, recs []solver.Record) error {
	return im.s.AppendRecords(ctx, im.id, trace, recs)
}

var _ Importer = (*Store)(nil)
