package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// SetUploadName keeps the name an upload was sent with, as
// store.Store.SetUploadName does, for every server sharing the database.
func (s *Store) SetUploadName(ctx context.Context, sum, name string) error {
	if err := store.CheckUploadSum(sum); err != nil {
		return err
	}
	if err := store.CheckUploadName(name); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO upload_names (sha256, name, at_us) VALUES ($1, $2, $3)
		ON CONFLICT (sha256) DO UPDATE SET name = excluded.name, at_us = excluded.at_us`, sum, name, micros(now())); err != nil {
		return fmt.Errorf("store: naming upload %s…: %w", sum[:store.ShortSum], s.noteWrite(err))
	}
	return nil
}

// UploadNames returns the names of the uploads whose SHA-256 starts with
// one of keys, as store.Store.UploadNames does.
func (s *Store) UploadNames(ctx context.Context, keys []string) (map[string]string, error) {
	short, err := store.CheckUploadKeys(keys)
	if err != nil || len(short) == 0 {
		return map[string]string{}, err
	}
	rows, err := s.pool.Query(ctx, `SELECT sha256, name FROM upload_names WHERE left(sha256, 12) = ANY($1)`, short)
	if err != nil {
		return nil, fmt.Errorf("store: reading upload names: %w", err)
	}
	found := map[string]string{}
	var sum, name string
	if _, err := pgx.ForEachRow(rows, []any{&sum, &name}, func() error {
		found[sum] = name
		return nil
	}); err != nil {
		return nil, fmt.Errorf("store: reading upload names: %w", err)
	}
	return store.MatchUploadKeys(found, keys), nil
}

// ForgetUploadNames removes the names of the uploads sums. The names of
// the data files the store removes go with them (reclaimIn).
func (s *Store) ForgetUploadNames(ctx context.Context, sums []string) error {
	for _, sum := range sums {
		if err := store.CheckUploadSum(sum); err != nil {
			return err
		}
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM upload_names WHERE sha256 = ANY($1)`, sums); err != nil {
		return fmt.Errorf("store: forgetting upload names: %w", s.noteWrite(err))
	}
	return nil
}
