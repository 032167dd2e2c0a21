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
func (s *Store) SetLabels(ctx context.Context, id, claim string, labels []string) error {
	for i, l := range labels {
		if err := checkText(fmt.Sprintf("traces[%d].algo", i), l, store.MaxName); err != nil {
			return err
		}
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := lockClaim(ctx, tx, id, claim); err != nil {
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
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: naming the traces of run %s: %w", id, err)
	}
	return nil
}
