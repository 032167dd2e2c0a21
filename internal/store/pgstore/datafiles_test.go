package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestDataFiles: a data file is kept once by its content's SHA-256, read
// back checked, and the quota counts each content once.
func TestDataFiles(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
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

// dataRun stores a run that names the data files sums (as the queue's
// references do), with the given status (ended, unless live).
func dataRun(t *testing.T, s *Store, status string, sums ...string) string {
	t.Helper()
	ctx := context.Background()
	r := storetest.TestRun("lasso", "afw")
	r.Status = status
	if status != store.StatusQueued && status != store.StatusRunning {
		r.Ended = now()
	}
	id, err := s.PutRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	refs := "["
	for i, sum := range sums {
		if i > 0 {
			refs += ","
		}
		refs += fmt.Sprintf(`{"param":"x","name":"f%d.csv","sha256":%q,"bytes":1,"stored":true}`, i, sum)
	}
	if err := s.SetDataRefs(ctx, id, []byte(refs+"]")); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDataFilesGoWithTheirLastRun: deleting runs removes the data files no
// run names any more (a file two runs name goes with the second), never one
// a queued run names nor one kept within its grace (a run being submitted
// is about to name it), and frees the quota; Trim does the same, a file
// kept again starts its grace again, and a put over the quota removes the
// files past their grace first.
func TestDataFilesGoWithTheirLastRun(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	clock := time.Now()
	defer SetClock(func() time.Time { return clock })()
	const quota = 150
	put := func(b []byte) string {
		t.Helper()
		sum, err := s.PutDataFile(ctx, b, quota)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	kept := func(what, sum string, want bool) {
		t.Helper()
		_, err := s.DataFile(ctx, sum)
		if want && err != nil {
			t.Errorf("%s: gone (%v)", what, err)
		}
		if !want && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: still kept (%v)", what, err)
		}
	}
	stats := func(what string, want DataFileStats) {
		t.Helper()
		if got, err := s.DataFiles(ctx); err != nil || got != want {
			t.Errorf("%s: counts %+v, %v; want %+v", what, got, err, want)
		}
	}
	x := bytes.Repeat([]byte("1,2\n"), 25) // 100 bytes
	y := bytes.Repeat([]byte("3,4\n"), 25)
	w := []byte("5,6\n7,8\n9\n") // 10 bytes
	sx, sw := put(x), put(w)
	a := dataRun(t, s, store.StatusDone, sx)
	b := dataRun(t, s, store.StatusFailed, sx)
	q := dataRun(t, s, store.StatusQueued, sw) // a queued run: its file stays
	if _, err := s.PutDataFile(ctx, y, quota); !errors.Is(err, ErrDataQuota) {
		t.Fatalf("a file over the quota: %v", err)
	}
	stats("at first", DataFileStats{Files: 2, Bytes: 110})

	clock = clock.Add(2 * DataFileGrace)
	if n, err := s.Delete(ctx, a); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	kept("x after the first of its two runs went", sx, true)
	if _, err := s.PutDataFile(ctx, y, quota); !errors.Is(err, ErrDataQuota) {
		t.Errorf("the quota freed while a run still names x: %v", err)
	}
	z := []byte("fresh")
	sz := put(z) // an upload no run names yet
	stats("with a fresh upload", DataFileStats{Files: 3, Bytes: 115, Unnamed: 1, UnnamedBytes: 5})
	if n, err := s.Delete(ctx, b); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	kept("x after its second run went", sx, false)
	kept("the file of a queued run", sw, true)
	kept("a fresh upload no run names yet", sz, true)
	sy := put(y) // the quota is freed
	c2 := dataRun(t, s, store.StatusDone, sy)

	// Trim removes runs and their files alike, never a queued run's
	clock = clock.Add(2 * DataFileGrace)
	stats("before trimming", DataFileStats{Files: 3, Bytes: 115, Unnamed: 1, UnnamedBytes: 5, Reclaimable: 1, ReclaimBytes: 5})
	if n, err := s.Trim(ctx, 0); err != nil || n != 1 {
		t.Fatalf("trim: %d, %v (want run %s deleted)", n, err, c2)
	}
	kept("y after its run was trimmed", sy, false)
	kept("an upload past its grace no run names", sz, false)
	stats("after trimming", DataFileStats{Files: 1, Bytes: 10})

	// w kept again (a run being submitted names it): its grace starts again
	put(w)
	if n, err := s.Delete(ctx, q); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	kept("a file kept again just now", sw, true)
	clock = clock.Add(2 * DataFileGrace)
	big := put(bytes.Repeat([]byte("0"), 145)) // over the quota unless w goes first
	kept("w past its grace, after a put over the quota", sw, false)
	clock = clock.Add(2 * DataFileGrace)
	if n, nb, err := s.ReclaimDataFiles(ctx); err != nil || n != 1 || nb != 145 {
		t.Errorf("reclaim: %d files, %d bytes, %v; want 1, 145", n, nb, err)
	}
	kept("an upload reclaimed", big, false)

	if err := s.SetDataRefs(ctx, c2, []byte(`{"sha256":"x"}`)); err == nil || !strings.Contains(err.Error(), "data_refs") {
		t.Errorf("references that are no JSON array: %v", err)
	}
}

// TestUploadsChargedToTheirClient: an upload is charged to the client that
// sent it first, within the client's quota and the total (a QuotaError
// naming whose quota and what is left); a file a run named goes when its
// last run is deleted, at once; a file kept again while an older run names
// it (a run being submitted names it next) is not taken by deleting the
// older run before the new one names it, and a file no run named stays for
// the grace only.
func TestUploadsChargedToTheirClient(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	clock := time.Now()
	defer SetClock(func() time.Time { return clock })()
	const total, mine, grace = 100, 30, time.Hour
	put := func(b []byte, client string) (string, error) {
		return s.PutUpload(ctx, b, client, total, mine, grace)
	}
	kept := func(what, sum string, want bool) {
		t.Helper()
		k, err := s.KeptDataFiles(ctx, []string{sum})
		if err != nil || k[sum] != want {
			t.Errorf("%s: kept %v (%v), want %v", what, k[sum], err, want)
		}
	}
	a1, err := put(bytes.Repeat([]byte("a"), 20), "A")
	if err != nil {
		t.Fatal(err)
	}
	_, err = put(bytes.Repeat([]byte("b"), 20), "A")
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Client != "A" || qe.Quota != mine || qe.Left != 10 || !errors.Is(err, ErrDataQuota) {
		t.Fatalf("A over its quota: %v (%+v)", err, qe)
	}
	if _, err := put(bytes.Repeat([]byte("a"), 20), "B"); err != nil {
		t.Errorf("B sends A's content again (free): %v", err)
	}
	b1, err := put(bytes.Repeat([]byte("c"), 25), "B")
	if err != nil {
		t.Fatalf("B beside A: %v", err)
	}
	if _, err := put(bytes.Repeat([]byte("d"), 60), "C"); !errors.As(err, &qe) || qe.Client != "" || qe.Quota != total || qe.Left != 55 {
		t.Errorf("C over the total: %v (%+v)", err, qe)
	}

	// A's file goes with its last run, within its grace
	r1 := dataRun(t, s, store.StatusDone, a1)
	r2 := dataRun(t, s, store.StatusDone, a1)
	if _, err := s.Delete(ctx, r1); err != nil {
		t.Fatal(err)
	}
	kept("a file a remaining run names", a1, true)
	// kept again for a run being submitted: deleting r2 leaves it
	if _, err := s.PutDataFile(ctx, bytes.Repeat([]byte("a"), 20), total); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, r2); err != nil {
		t.Fatal(err)
	}
	kept("a file kept again before its new run names it", a1, true)
	r3 := dataRun(t, s, store.StatusDone, a1)
	if _, err := s.Delete(ctx, r3); err != nil {
		t.Fatal(err)
	}
	kept("a file after its last run was deleted", a1, false)
	if _, err := put(bytes.Repeat([]byte("b"), 30), "A"); err != nil {
		t.Errorf("A after its file went: %v", err)
	}
	// B's file, never named, stays for the grace only
	if _, err := put(bytes.Repeat([]byte("e"), 10), "B"); !errors.As(err, &qe) || qe.Client != "B" {
		t.Errorf("B at its quota within the grace: %v", err)
	}
	kept("a file no run named, within its grace", b1, true)
	clock = clock.Add(grace + time.Second)
	if _, err := put(bytes.Repeat([]byte("e"), 10), "B"); err != nil {
		t.Errorf("B after its unnamed file's grace: %v", err)
	}
	kept("a file no run named, past its grace", b1, false)
}
