package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Data files that travel with a run: a file a run reads is kept in the
// store by the SHA-256 of its content (an upload, or a file of the
// submitter's disk), so that every worker reads the same bytes; each run
// keeps the references to its files (internal/queue's DataRefs, as JSON).

// ErrDataQuota is returned (wrapped) by PutDataFile when the store's data
// files would exceed their quota.
var ErrDataQuota = errors.New("the data files kept in the store would exceed their quota")

// SHA256 is the hex SHA-256 of b, the key of a data file.
func SHA256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// PutDataFile keeps b in the store under its SHA-256, which it returns; a
// content kept before is not stored again and costs nothing. quota (0:
// none) bounds the bytes of every data file kept together.
func (s *Store) PutDataFile(ctx context.Context, b []byte, quota int64) (string, error) {
	sum := SHA256(b)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// one writer at a time checks the quota
		if _, err := tx.Exec(ctx, `LOCK TABLE data_files IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		var have bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM data_files WHERE sha256 = $1)`, sum).Scan(&have); err != nil || have {
			return err
		}
		if quota > 0 {
			var used int64
			if err := tx.QueryRow(ctx, `SELECT COALESCE(sum(bytes), 0) FROM data_files`).Scan(&used); err != nil {
				return err
			}
			if used+int64(len(b)) > quota {
				return fmt.Errorf("%w: %d bytes kept, %d more, quota %d", ErrDataQuota, used, len(b), quota)
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO data_files (sha256, bytes, data, created_us) VALUES ($1, $2, $3, $4)`,
			sum, len(b), b, micros(now()))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: keeping a data file of %d bytes: %w", len(b), err)
	}
	return sum, nil
}

// DataFile returns the data file kept under sum, checked against it.
func (s *Store) DataFile(ctx context.Context, sum string) ([]byte, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM data_files WHERE sha256 = $1`, sum).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("data file sha256:" + sum)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading data file sha256:%s: %w", sum, err)
	}
	if got := SHA256(b); got != sum {
		return nil, fmt.Errorf("store: data file sha256:%s reads as sha256:%s (damaged)", sum, got)
	}
	return b, nil
}

// SetDataRefs keeps a run's references to its data files (JSON).
func (s *Store) SetDataRefs(ctx context.Context, id string, refs []byte) error {
	return s.exec(ctx, "run "+id, "setting the data files of", `UPDATE runs SET data_refs = $2 WHERE id = $1`, id, string(refs))
}

// DataRefs returns a run's references to its data files (nil: none).
func (s *Store) DataRefs(ctx context.Context, id string) ([]byte, error) {
	var refs *string
	err := s.pool.QueryRow(ctx, `SELECT data_refs FROM runs WHERE id = $1`, id).Scan(&refs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("run " + id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	if refs == nil {
		return nil, nil
	}
	return []byte(*refs), nil
}
