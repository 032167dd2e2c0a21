package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// SetLabels names a claimed run's traces once its worker has built the
// instance: a trace's name (its algo) comes from the one labelling
// function, which needs the instance (a variant such as the slack collapse
// is named there), so a queued run's traces carry the algorithm's name
// until then. labels[i] names trace i; an empty label leaves it as it is.
// A run still named by default (store.DefaultName) takes the default
// name of its new trace names in the same transaction; a name the user
// gave stays.
func (s *Store) SetLabels(ctx context.Context, id, claim string, labels []string) error {
	for i, l := range labels {
		if err := checkText(fmt.Sprintf("traces[%d].algo", i), l, store.MaxName); err != nil {
			return err
		}
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := lockClaim(ctx, tx, id, claim, forUpdate); err != nil {
			return err
		}
		before, err := defaultNameIn(ctx, tx, id)
		if err != nil {
			return err
		}
		for i, l := range labels {
			if l == "" {
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE traces SET algo = $3 WHERE run_id = $1 AND idx = $2`, id, i, l); err != nil {
				return err
			}
		}
		after, err := defaultNameIn(ctx, tx, id)
		if err != nil || after == before {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET name = $2 WHERE id = $1 AND name = $3`, id, after, before)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: naming the traces of run %s: %w", id, err)
	}
	return nil
}

// defaultNameIn is the DefaultName of run id as its traces name it now.
func defaultNameIn(ctx context.Context, tx pgx.Tx, id string) (string, error) {
	var problem string
	if err := tx.QueryRow(ctx, `SELECT problem FROM runs WHERE id = $1`, id).Scan(&problem); err != nil {
		return "", err
	}
	algos, err := firstAlgos(ctx, tx, id)
	return store.DefaultName(problem, algos), err
}

// firstAlgos names the traces of run id's first replication, in order.
func firstAlgos(ctx context.Context, tx pgx.Tx, id string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT algo FROM traces WHERE run_id = $1 AND replication = 0 ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
