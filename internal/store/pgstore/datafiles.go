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
	"github.com/fwlab/fwlab/internal/store"
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
// when the quota would be exceeded the files no run names that a deleted
// run named, or past their grace (DataFileGrace), are removed first.
func (s *Store) PutDataFile(ctx context.Context, b []byte, quota int64) (string, error) {
	return s.PutUpload(ctx, b, "", quota, 0, DataFileGrace)
}

// QuotaError is a data file refused over a quota (it wraps ErrDataQuota):
// the client's own (Client, when not "") or the total; Left is what the
// quota had left, Need the file's bytes.
type QuotaError struct {
	Client            string
	Quota, Left, Need int64
}

func (e *QuotaError) Error() string {
	if e.Client != "" {
		return fmt.Sprintf("%v: the client's files would exceed its quota of %d bytes: %d bytes left, %d more", ErrDataQuota, e.Quota, e.Left, e.Need)
	}
	return fmt.Sprintf("%v: %d bytes kept, %d more, quota %d", ErrDataQuota, e.Quota-e.Left, e.Need, e.Quota)
}

func (e *QuotaError) Unwrap() error { return ErrDataQuota }

// UploadQuota says whose quota refused the file (the client's or the
// total), its bytes and what it had left.
func (e *QuotaError) UploadQuota() (client bool, quota, left int64) {
	return e.Client != "", e.Quota, e.Left
}

// PutUpload is PutDataFile for a file that client sends (an upload to a
// server): a new content is charged to client, within the quotas (total:
// the bytes of every file together, clientQuota: those charged to one
// client; 0: no bound; a *QuotaError otherwise), when room is needed after
// removing the files no run has named within grace, all counted here in the database inside the transaction that
// keeps the file, so that the servers sharing the database share the
// quotas. A content kept before is charged to the client that sent it
// first and costs nothing; it counts as not named by a run (its grace
// starts again) until a run names it.
func (s *Store) PutUpload(ctx context.Context, b []byte, client string, total, clientQuota int64, grace time.Duration) (string, error) {
	sum := SHA256(b)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// one writer at a time checks the quotas
		if _, err := tx.Exec(ctx, `LOCK TABLE data_files IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		// kept again: not named until a run names it (SetDataRefs), so
		// that deleting an older run naming it leaves it to the run
		// being submitted
		tag, err := tx.Exec(ctx, `UPDATE data_files SET created_us = $2, named = false WHERE sha256 = $1`, sum, micros(now()))
		if err != nil || tag.RowsAffected() > 0 {
			return err
		}
		if err := checkQuota(ctx, tx, int64(len(b)), client, total, clientQuota, grace); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO data_files (sha256, bytes, data, created_us, client) VALUES ($1, $2, $3, $4, $5)`,
			sum, len(b), b, micros(now()), client)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: keeping a data file of %d bytes: %w", len(b), err)
	}
	return sum, nil
}

// checkQuota refuses n more bytes of client's data files beyond the
// quotas, after
// removing the files no run names that a deleted run named or that are
// past their grace.
func checkQuota(ctx context.Context, tx pgx.Tx, n int64, client string, total, clientQuota int64, grace time.Duration) error {
	over := func() (*QuotaError, error) {
		var used, mine int64
		err := tx.QueryRow(ctx, `SELECT COALESCE(sum(bytes), 0), COALESCE(sum(bytes) FILTER (WHERE client = $1), 0) FROM data_files`, client).Scan(&used, &mine)
		switch {
		case err != nil:
			return nil, err
		case total > 0 && used+n > total:
			return &QuotaError{Quota: total, Left: max(0, total-used), Need: n}, nil
		case client != "" && clientQuota > 0 && mine+n > clientQuota:
			return &QuotaError{Client: client, Quota: clientQuota, Left: max(0, clientQuota-mine), Need: n}, nil
		}
		return nil, nil
	}
	qe, err := over()
	if err != nil || qe == nil {
		return err
	}
	if _, _, err := reclaimIn(ctx, tx, grace); err != nil {
		return err
	}
	if qe, err = over(); err != nil || qe == nil {
		return err
	}
	return qe
}

// DataFileGrace is how long a data file that no run has named since it was
// last kept (PutDataFile, PutUpload) stays for `dashboard store reclaim`
// and for a file that a submission keeps: a run submitted names its files
// after they are kept, within seconds; a day leaves a wide margin. A
// server's uploads use the server's own grace (PutUpload's grace).
// A file a run named goes with the last run naming it, whatever its age.
const DataFileGrace = 24 * time.Hour

// namedSQL selects the SHA-256 of every data file some run names.
const namedSQL = `SELECT DISTINCT e->>'sha256' AS sha256 FROM runs,
	jsonb_array_elements(CASE WHEN jsonb_typeof(data_refs::jsonb) = 'array' THEN data_refs::jsonb ELSE '[]'::jsonb END) e
	WHERE data_refs IS NOT NULL`

// reclaimIn removes the data files that no run names and that a run named
// since they were last kept (its runs are deleted) or were last kept
// before grace ago (by the store's clock), and their upload names; it
// returns how many and their bytes.
func reclaimIn(ctx context.Context, tx pgx.Tx, grace time.Duration) (files, bytes int64, err error) {
	err = tx.QueryRow(ctx, `WITH named AS (`+namedSQL+`),
		gone AS (DELETE FROM data_files d WHERE (d.named OR d.created_us < $1)
			AND NOT EXISTS (SELECT 1 FROM named WHERE named.sha256 = d.sha256) RETURNING sha256, bytes),
		names AS (DELETE FROM upload_names n USING gone WHERE n.sha256 = gone.sha256)
		SELECT count(*), COALESCE(sum(bytes), 0) FROM gone`, micros(now().Add(-grace))).Scan(&files, &bytes)
	return files, bytes, err
}

// ReclaimDataFiles removes the data files that no run names and that a
// deleted run named or that are past their grace (DataFileGrace), as
// deleting runs does; it returns how many and their bytes.
func (s *Store) ReclaimDataFiles(ctx context.Context) (files, bytes int64, err error) {
	err = s.tx(ctx, func(tx pgx.Tx) error {
		files, bytes, err = reclaimIn(ctx, tx, DataFileGrace)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: removing data files no run names: %w", err)
	}
	return files, bytes, nil
}

// DataFileStats counts the data files kept in the store and their bytes:
// all of them, those no run names, and of these those a deleted run named
// or past their grace (what ReclaimDataFiles would remove).
type DataFileStats struct {
	Files, Bytes              int64
	Unnamed, UnnamedBytes     int64
	Reclaimable, ReclaimBytes int64
}

// DataFiles returns the counts of the data files kept in the store.
func (s *Store) DataFiles(ctx context.Context) (DataFileStats, error) {
	var st DataFileStats
	err := s.pool.QueryRow(ctx, `WITH named AS (`+namedSQL+`),
		f AS (SELECT d.bytes, (d.named OR d.created_us < $1) AS old, NOT EXISTS (SELECT 1 FROM named WHERE named.sha256 = d.sha256) AS unnamed FROM data_files d)
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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET data_refs = $2 WHERE id = $1`, id, string(refs))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("run " + id)
		}
		// its files are named: they go with the last run naming them
		_, err = tx.Exec(ctx, `UPDATE data_files SET named = true WHERE NOT named AND sha256 IN
			(SELECT e->>'sha256' FROM jsonb_array_elements($1::jsonb) e WHERE jsonb_typeof(e) = 'object')`, string(refs))
		return err
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("store: setting the data files of run %s: %w", id, err)
	}
	return err
}

// KeptDataFiles reports which of the SHA-256 sums are kept in the store.
func (s *Store) KeptDataFiles(ctx context.Context, sums []string) (map[string]bool, error) {
	kept := map[string]bool{}
	rows, err := s.pool.Query(ctx, `SELECT sha256 FROM data_files WHERE sha256 = ANY($1)`, sums)
	if err != nil {
		return nil, fmt.Errorf("store: looking up data files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sum string
		if err := rows.Scan(&sum); err != nil {
			return nil, fmt.Errorf("store: looking up data files: %w", err)
		}
		kept[sum] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: looking up data files: %w", err)
	}
	return kept, nil
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
