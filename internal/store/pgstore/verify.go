package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// AddVerification records a verification of a stored run, as
// store.Store.AddVerification does.
func (s *Store) AddVerification(ctx context.Context, v *store.Verification) (string, error) {
	if err := v.Prepare(); err != nil {
		return "", err
	}
	if err := checkText("detail", v.Detail, store.MaxVerifyDetail); err != nil {
		return "", err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO verifications (id, run_id, at_us, outcome, records, detail, version, rerun_id)
		SELECT $1, id, $2, $3, $4, $5, $6, $7 FROM runs WHERE id = $8`,
		v.ID, micros(v.At), v.Outcome, v.Records, v.Detail, v.Version, nullString(v.RerunID), v.RunID)
	if err != nil {
		return "", fmt.Errorf("store: recording a verification of run %s: %w", v.RunID, err)
	}
	if tag.RowsAffected() == 0 {
		return "", notFound("run " + v.RunID)
	}
	return v.ID, nil
}

const verifyCols = `id, run_id, at_us, outcome, records, detail, version, rerun_id`

func scanVerification(row pgx.Row) (store.Verification, error) {
	var v store.Verification
	var at int64
	var rerun *string
	err := row.Scan(&v.ID, &v.RunID, &at, &v.Outcome, &v.Records, &v.Detail, &v.Version, &rerun)
	v.At = fromMicros(at)
	if rerun != nil {
		v.RerunID = *rerun
	}
	return v, err
}

func (s *Store) verifications(ctx context.Context, q string, arg any) ([]store.Verification, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+verifyCols+` FROM verifications WHERE `+q, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Verification
	for rows.Next() {
		v, err := scanVerification(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Verifications returns a run's verifications, newest first.
func (s *Store) Verifications(ctx context.Context, runID string) ([]store.Verification, error) {
	out, err := s.verifications(ctx, `run_id = $1 ORDER BY at_us DESC, id DESC`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: verifications of run %s: %w", runID, err)
	}
	return out, nil
}

// LastVerifications returns the latest verification of each of the runs
// that has one, by run id.
func (s *Store) LastVerifications(ctx context.Context, runIDs []string) (map[string]store.Verification, error) {
	all, err := s.verifications(ctx, `run_id = ANY($1) ORDER BY at_us, id`, runIDs)
	if err != nil {
		return nil, fmt.Errorf("store: verifications: %w", err)
	}
	out := make(map[string]store.Verification, len(all))
	for _, v := range all {
		out[v.RunID] = v // the latest comes last
	}
	return out, nil
}
