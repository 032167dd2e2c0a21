package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
)

// Outcomes of a verification.
const (
	// VerifyReproduced: the re-run gave the same records and summaries
	// (every field but the wall-clock ones).
	VerifyReproduced = "reproduced"
	// VerifyDiffers: the re-run differs; Detail names the first difference.
	VerifyDiffers = "differs"
	// VerifyFailed: the run could not be re-run here (a data file missing,
	// the re-run cancelled, …); Detail says why.
	VerifyFailed = "failed"
)

// Verification is one re-run of a stored run on this machine, compared
// with it (`dashboard verify -db`, or the dashboard's Verify action).
type Verification struct {
	ID      string    // given by AddVerification
	RunID   string    // the run verified
	At      time.Time // when the comparison ended
	Outcome string    // VerifyReproduced, VerifyDiffers or VerifyFailed
	Records int       // records found identical
	Detail  string    // the first difference, or why the re-run failed
	Version string    // the fwlab that re-ran it
	// RerunID is the re-run's own stored run when it went through the
	// dashboard's queue ("" from the command line, or once deleted).
	RerunID string
}

// MaxVerifyDetail bounds the characters of a verification's detail.
const MaxVerifyDetail = 2000

// AddVerification records a verification of a stored run and returns its
// id. At defaults to now.
func (s *Store) AddVerification(ctx context.Context, v *Verification) (string, error) {
	if err := v.Prepare(); err != nil {
		return "", err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO verifications (id, run_id, at_us, outcome, records, detail, version, rerun_id)
		SELECT ?, id, ?, ?, ?, ?, ?, ? FROM runs WHERE id = ? AND entered_us IS NOT NULL`,
		v.ID, micros(v.At), v.Outcome, v.Records, v.Detail, v.Version, nullString(v.RerunID), v.RunID)
	if err != nil {
		return "", fmt.Errorf("store: recording a verification of run %s: %w", v.RunID, err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM verifications WHERE id = ?`, v.ID).Scan(&n); err != nil {
		return "", fmt.Errorf("store: recording a verification of run %s: %w", v.RunID, err)
	}
	if n == 0 {
		return "", fmt.Errorf("store: run %s: %w", v.RunID, ErrNotFound)
	}
	return v.ID, nil
}

// Prepare checks a verification before it is stored (the outcome is one
// of the three, the counts non-negative, the texts within their bounds),
// sets At to now when it is zero and gives it a new ID. Every backend's
// AddVerification calls it first.
func (v *Verification) Prepare() error {
	switch v.Outcome {
	case VerifyReproduced, VerifyDiffers, VerifyFailed:
	default:
		return spec.Errorf("outcome", "must be %s, %s or %s, got %q", VerifyReproduced, VerifyDiffers, VerifyFailed, v.Outcome)
	}
	if v.Records < 0 {
		return spec.Errorf("records", "must be non-negative, got %d", v.Records)
	}
	if err := checkText("detail", v.Detail, MaxVerifyDetail); err != nil {
		return err
	}
	if err := checkText("version", v.Version, MaxName); err != nil {
		return err
	}
	if v.At.IsZero() {
		v.At = time.Now()
	}
	v.ID = NewID()
	return nil
}

const verifyCols = `id, run_id, at_us, outcome, records, detail, version, rerun_id`

func scanVerification(sc scanner) (Verification, error) {
	var v Verification
	var at int64
	var rerun sql.NullString
	err := sc.Scan(&v.ID, &v.RunID, &at, &v.Outcome, &v.Records, &v.Detail, &v.Version, &rerun)
	v.At, v.RerunID = fromMicros(at), rerun.String
	return v, err
}

// Verifications returns a run's verifications, newest first.
func (s *Store) Verifications(ctx context.Context, runID string) ([]Verification, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+verifyCols+` FROM verifications WHERE run_id = ? ORDER BY at_us DESC, id DESC`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: verifications of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Verification
	for rows.Next() {
		v, err := scanVerification(rows)
		if err != nil {
			return nil, fmt.Errorf("store: verifications of run %s: %w", runID, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: verifications of run %s: %w", runID, err)
	}
	return out, nil
}

// LastVerifications returns the latest verification of each of the runs
// that has one (the History's column), by run id.
func (s *Store) LastVerifications(ctx context.Context, runIDs []string) (map[string]Verification, error) {
	out := map[string]Verification{}
	for len(runIDs) > 0 {
		chunk := runIDs[:min(len(runIDs), 500)]
		runIDs = runIDs[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+verifyCols+` FROM verifications WHERE run_id IN (`+placeholders(len(chunk))+`) ORDER BY at_us, id`, args...)
		if err != nil {
			return nil, fmt.Errorf("store: verifications: %w", err)
		}
		for rows.Next() {
			v, err := scanVerification(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: verifications: %w", err)
			}
			out[v.RunID] = v // the latest comes last
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: verifications: %w", err)
		}
	}
	return out, nil
}
