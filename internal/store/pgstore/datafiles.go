package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/spec"
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
// none) bounds the bytes of every data file kept together; a file kept
// before is kept anew (its grace starts again, as a run will name it), and
// when the quota would be exceeded the files past their grace that no run
// names are removed first.
func (s *Store) PutDataFile(ctx context.Context, b []byte, quota int64) (string, error) {
	sum := SHA256(b)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// one writer at a time checks the quota
		if _, err := tx.Exec(ctx, `LOCK TABLE data_files IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE data_files SET created_us = $2 WHERE sha256 = $1`, sum, micros(now()))
		if err != nil || tag.RowsAffected() > 0 {
			return err
		}
		if quota > 0 {
			if err := checkQuota(ctx, tx, int64(len(b)), quota); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO data_files (sha256, bytes, data, created_us) VALUES ($1, $2, $3, $4)`,
			sum, len(b), b, micros(now()))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: keeping a data file of %d bytes: %w", len(b), err)
	}
	return sum, nil
}

// checkQuota refuses n more bytes of data files beyond quota, after
// removing the files past their grace that no run names.
func checkQuota(ctx context.Context, tx pgx.Tx, n, quota int64) error {
	used, err := usedBytes(ctx, tx)
	if err != nil || used+n <= quota {
		return err
	}
	if _, _, err := reclaimIn(ctx, tx); err != nil {
		return err
	}
	if used, err = usedBytes(ctx, tx); err != nil || used+n <= quota {
		return err
	}
	return fmt.Errorf("%w: %d bytes kept, %d more, quota %d", ErrDataQuota, used, n, quota)
}

func usedBytes(ctx context.Context, tx pgx.Tx) (int64, error) {
	var used int64
	err := tx.QueryRow(ctx, `SELECT COALESCE(sum(bytes), 0) FROM data_files`).Scan(&used)
	return used, err
}

// DataFileGrace is how long a data file that no run names is kept after it
// was last kept (PutDataFile): a run submitted names its files after they
// are kept, within seconds; a day leaves a wide margin.
const DataFileGrace = 24 * time.Hour

// namedSQL selects the SHA-256 of every data file some run names.
const namedSQL = `SELECT DISTINCT e->>'sha256' AS sha256 FROM runs,
	jsonb_array_elements(CASE WHEN jsonb_typeof(data_refs::jsonb) = 'array' THEN data_refs::jsonb ELSE '[]'::jsonb END) e
	WHERE data_refs IS NOT NULL`

// reclaimIn removes the data files that no run names and that were last
// kept before DataFileGrace ago (by the store's clock); it returns how many
// and their bytes.
func reclaimIn(ctx context.Context, tx pgx.Tx) (files, bytes int64, err error) {
	err = tx.QueryRow(ctx, `WITH named AS (`+namedSQL+`),
		gone AS (DELETE FROM data_files d WHERE d.created_us < $1
			AND NOT EXISTS (SELECT 1 FROM named WHERE named.sha256 = d.sha256) RETURNING bytes)
		SELECT count(*), COALESCE(sum(bytes), 0) FROM gone`, micros(now().Add(-DataFileGrace))).Scan(&files, &bytes)
	return files, bytes, err
}

// ReclaimDataFiles removes the data files that no run names and that are
// past their grace (DataFileGrace), as deleting runs does; it returns how
// many and their bytes.
func (s *Store) ReclaimDataFiles(ctx context.Context) (files, bytes int64, err error) {
	err = s.tx(ctx, func(tx pgx.Tx) error {
		files, bytes, err = reclaimIn(ctx, tx)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: removing data files no run names: %w", err)
	}
	return files, bytes, nil
}

// DataFileStats counts the data files kept in the store and their bytes:
// all of them, those no run names, and of these those past their grace
// (what ReclaimDataFiles would remove).
type DataFileStats struct {
	Files, Bytes              int64
	Unnamed, UnnamedBytes     int64
	Reclaimable, ReclaimBytes int64
}

// DataFiles returns the counts of the data files kept in the store.
func (s *Store) DataFiles(ctx context.Context) (DataFileStats, error) {
	var st DataFileStats
	err := s.pool.QueryRow(ctx, `WITH named AS (`+namedSQL+`),
		f AS (SELECT d.bytes, d.created_us < $1 AS old, NOT EXISTS (SELECT 1 FROM named WHERE named.sha256 = d.sha256) AS unnamed FROM data_files d)
		SELECT count(*), COALESCE(sum(bytes), 0),
			count(*) FILTER (WHERE unnamed), COALESCE(sum(bytes) FILTER (WHERE unnamed), 0),
			count(*) FILTER (WHERE unnamed AND old), COALESCE(sum(bytes) FILTER (WHERE unnamed AND old), 0)
		FROM f`, micros(now().Add(-DataFileGrace))).Scan(&st.Files, &st.Bytes, &st.Unnamed, &st.UnnamedBytes, &st.Reclaimable, &st.ReclaimBytes)
	if err != nil {
		return st, fmt.Errorf("store: counting data files: %w", err)
	}
	return st, nil
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

// SetDataRefs keeps a run's references to its data files (a JSON array of
// objects, each naming its file's "sha256").
func (s *Store) SetDataRefs(ctx context.Context, id string, refs []byte) error {
	var arr []json.RawMessage
	if err := json.Unmarshal(refs, &arr); err != nil || arr == nil {
		return spec.Errorf("data_refs", "must be a JSON array of data file references, got %.40q", refs)
	}
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
