package store

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
)

// fileSize is a file's size, 0 when it does not exist.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// DiskUsage counts what the store's files take, the write-ahead log
// included, and a large delete checkpoints the log and truncates it.
func TestDiskUsageCountsTheLogAndALargeDeleteTruncatesIt(t *testing.T) {
	old := WALTruncateBytes
	WALTruncateBytes = 1 << 20
	t.Cleanup(func() { WALTruncateBytes = old })
	ctx := context.Background()
	s, path := openTemp(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var ids []string
	for i := 0; i < 60; i++ {
		id, err := s.PutRun(ctx, testRun("lasso", "afw"))
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 10; j++ {
			if err := s.AppendRecords(ctx, id, 0, randRecords(rng, 200)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	wal := fileSize(t, path+"-wal")
	if wal <= WALTruncateBytes {
		t.Fatalf("the writes left a log of %d bytes, want more than %d for the test to mean anything", wal, WALTruncateBytes)
	}
	du, err := s.DiskUsage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if files := fileSize(t, path) + wal; du < files {
		t.Errorf("DiskUsage %d, but the file and its log take %d (the log alone %d)", du, files, wal)
	}
	if n, err := s.Delete(ctx, ids[:50]...); err != nil || n != 50 {
		t.Fatalf("deleted %d: %v", n, err)
	}
	if wal := fileSize(t, path+"-wal"); wal > WALTruncateBytes {
		t.Errorf("after deleting 50 runs the log is still %d bytes", wal)
	}
	after, err := s.DiskUsage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if files := fileSize(t, path) + fileSize(t, path+"-wal"); after < files || after >= du {
		t.Errorf("DiskUsage %d after the delete (before %d), the files take %d", after, du, files)
	}
	// what is left reads back whole
	for _, id := range ids[50:] {
		recs, err := s.Records(ctx, id, 0, 0, -1)
		if err != nil || len(recs) != 2000 {
			t.Fatalf("run %s: %d records, %v", id, len(recs), err)
		}
	}
}
