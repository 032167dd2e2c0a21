package pgstore

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
)

// TestDataFiles: a data file is kept once by its content's SHA-256, read
// back checked, and the quota counts each content once.
func TestDataFiles(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	s, err := Open(ctx, c.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := []byte("1,2\n3,4\n")
	sum, err := s.PutDataFile(ctx, a, 10)
	if err != nil || sum != "96bbd5de61f36b0e10c5771d180998d066192e8986aa34a8cb7c453f62959274" { // sha256sum's
		t.Fatalf("put: %q, %v", sum, err)
	}
	if again, err := s.PutDataFile(ctx, a, 10); err != nil || again != sum {
		t.Errorf("the same content again (within the quota, as it costs nothing): %q, %v", again, err)
	}
	if _, err := s.PutDataFile(ctx, []byte("5,6\n"), 10); !errors.Is(err, ErrDataQuota) {
		t.Errorf("over the quota: %v", err)
	}
	got, err := s.DataFile(ctx, sum)
	if err != nil || !bytes.Equal(got, a) {
		t.Errorf("read back: %q, %v", got, err)
	}
	if _, err := s.DataFile(ctx, SHA256([]byte("other"))); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown file: %v", err)
	}
	// damaged in the database: refused, naming both sums
	if _, err := s.pool.Exec(ctx, `UPDATE data_files SET data = 'x' WHERE sha256 = $1`, sum); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DataFile(ctx, sum); err == nil {
		t.Error("a damaged data file read without an error")
	}
}
