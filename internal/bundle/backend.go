package bundle

import (
	"context"
	"io"

	"github.com/fwlab/fwlab/internal/store"
)

// ImportInto is Import for any run store: a store that takes runs as
// streams (store.Importer: SQLite and PostgreSQL) streams the bundle in
// (Import), a bundle imported before answering its first run; another
// decodes it whole and puts it (Put), with no check for a bundle imported
// before.
func ImportInto(ctx context.Context, st store.Backend, r io.Reader) (*Imported, error) {
	if sq, ok := st.(store.Importer); ok {
		return Import(ctx, sq, r)
	}
	b, err := Decode(r)
	if err != nil {
		return nil, err
	}
	id, err := Put(ctx, st, b)
	if err != nil {
		return nil, err
	}
	out := &Imported{ID: id, Problem: b.Spec.Problem, Traces: len(b.Traces)}
	for _, t := range b.Traces {
		out.Records += len(t.Records)
	}
	return out, nil
}
