package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// Trim orders by when runs entered this store: bundles dated far in the
// future do not push out the runs made here, and it spares live runs, runs
// that ended or entered within TrimGrace, and runs being read.
func TestTrimOrdersByEntryAndSparesRecentLiveAndRead(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	future := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	put := func(at time.Time, created, ended time.Time, status string) string {
		setClock(t, at)
		r := testRun("lasso", "afw")
		r.Status, r.Created, r.Ended = status, created, ended
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRecords(ctx, id, 0, randRecords(rand.New(rand.NewPCG(1, 2)), 10)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// two bundles from 9999 imported first, then runs made here
	imp1 := put(base, future, future, StatusDone)
	imp2 := put(base.Add(time.Second), future, future, StatusDone)
	old := put(base.Add(2*time.Second), base, base.Add(3*time.Second), StatusDone)
	read := put(base.Add(3*time.Second), base, base.Add(4*time.Second), StatusDone)
	live := put(base.Add(4*time.Second), base, time.Time{}, StatusRunning)
	late := base.Add(time.Hour)
	justEnded := put(base.Add(5*time.Second), base, late.Add(-10*time.Second), StatusDone)
	justIn := put(late.Add(-5*time.Second), base, base, StatusDone)
	newest := put(late.Add(-2*TrimGrace), base, late.Add(-2*TrimGrace), StatusDone)

	// a reader in the middle of the read run's records
	inside := make(chan struct{})
	release := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.EachRecord(ctx, read, 0, 0, -1, func(i int, _ *solver.Record) error {
			if i == 0 {
				close(inside)
				<-release
			}
			return nil
		})
	}()
	<-inside
	setClock(t, late)
	n, err := s.Trim(ctx, 2)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	runs, _, _ := s.List(ctx, Filter{})
	var left []string
	for _, r := range runs {
		left = append(left, r.ID)
	}
	// newest and justIn entered last (kept by -keep 2); justEnded ended a
	// few seconds ago, live runs, read is being read; the 9999 bundles and
	// old go
	for _, id := range []string{newest, justIn, justEnded, live, read} {
		if !slices.Contains(left, id) {
			t.Errorf("run %s was trimmed", id)
		}
	}
	for _, id := range []string{imp1, imp2, old} {
		if slices.Contains(left, id) {
			t.Errorf("run %s was kept", id)
		}
	}
	if n != 3 {
		t.Errorf("trimmed %d runs, want 3", n)
	}
	// a minute later, what was recent or being read goes too (past keep)
	<-readDone
	setClock(t, late.Add(2*TrimGrace))
	if n, err := s.Trim(ctx, 2); err != nil || n != 2 {
		t.Errorf("second trim: %d, %v; want the two no longer recent", n, err)
	}
}

// An import is stored as it streams but stays invisible until Commit; a
// second import with the same digest answers the first run and keeps
// nothing; Abort and a crash (the owner's next Open) remove a partial
// import.
func TestImportIsInvisibleUntilCommitAndIdempotent(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	recs := randRecords(rand.New(rand.NewPCG(5, 6)), 5000)
	load := func() *Import {
		im, err := s.BeginImport(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.AddTrace(ctx, Trace{Index: 0}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRecords(ctx, im.ID(), 0, recs); err != nil {
			t.Fatal(err)
		}
		if err := im.EndTrace(ctx, Trace{Index: 0, Algo: "afw", Seed: 7}, TraceResult{Status: "converged"}); err != nil {
			t.Fatal(err)
		}
		return im
	}
	im := load()
	if _, err := s.Get(ctx, im.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("a run being imported is visible: %v", err)
	}
	if _, total, _ := s.List(ctx, Filter{}); total != 0 {
		t.Errorf("a run being imported is listed")
	}
	r := testRun("lasso", "afw")
	r.Status, r.Created = StatusDone, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	id, existing, err := im.Commit(ctx, r, "sha256:abc")
	if err != nil || existing || id != im.ID() {
		t.Fatalf("commit: %s %v %v", id, existing, err)
	}
	got, err := s.Get(ctx, id)
	if err != nil || got.Status != StatusDone || got.Traces[0].Algo != "afw" || got.Traces[0].Records != len(recs) || got.Traces[0].Status != "converged" {
		t.Fatalf("imported run: %+v %v", got, err)
	}

	again := load()
	before, _ := s.mainUsage(ctx) // the file's pages: the log holds the delete until a checkpoint
	id2, existing, err := again.Commit(ctx, r, "sha256:abc")
	if err != nil || !existing || id2 != id {
		t.Errorf("second import of the same bundle: %s %v %v; want %s", id2, existing, err, id)
	}
	if _, total, _ := s.List(ctx, Filter{}); total != 1 {
		t.Errorf("%d runs after importing one bundle twice", total)
	}
	if after, _ := s.mainUsage(ctx); after >= before {
		t.Errorf("the duplicate's records were not given back: %d bytes before, %d after", before, after)
	}

	ab := load()
	if err := ab.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM runs`).Scan(&n)
	if n != 1 {
		t.Errorf("%d runs in the table after an abort, want 1", n)
	}

	load() // left partial, as by a process killed during an import
	s.Close()
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.db.QueryRow(`SELECT COUNT(*) FROM runs`).Scan(&n)
	if n != 1 {
		t.Errorf("%d runs in the table after reopening with a partial import, want 1", n)
	}
	for _, bad := range []string{"", StatusRunning, "finished"} {
		im, _ := s2.BeginImport(ctx)
		r.Status = bad
		if _, _, err := im.Commit(ctx, r, ""); err == nil {
			t.Errorf("commit with status %q accepted", bad)
		}
		im.Abort(ctx)
	}
}

// corruptPage overwrites page n (from 1) of a database file with garbage.
func corruptPage(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, pageSize)
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	if _, err := f.WriteAt(junk, (n-1)*pageSize); err != nil {
		t.Fatal(err)
	}
}

// A store whose file fails the quick check is refused at open, naming the
// file and the first problem; Check lists the damage; Salvage copies what
// reads into a new file that opens and passes the check.
func TestDamagedStoreIsRefusedCheckedAndSalvaged(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	var ids []string
	want := map[string][]solver.Record{}
	for i := 0; i < 6; i++ {
		r := testRun("lasso", "afw")
		r.Status = StatusDone
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		recs := randRecords(rand.New(rand.NewPCG(uint64(i), 1)), 30_000)
		for lo := 0; lo < len(recs); lo += MaxBatchRecords {
			if err := s.AppendRecords(ctx, id, 0, recs[lo:min(lo+MaxBatchRecords, len(recs))]); err != nil {
				t.Fatal(err)
			}
		}
		ids, want[id] = append(ids, id), recs
	}
	if _, err := s.PutSweep(ctx, &Sweep{Axes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if problems, err := Check(ctx, path); err != nil || len(problems) != 0 {
		t.Fatalf("a sound file checks as %v, %v", problems, err)
	}
	fi, _ := os.Stat(path)
	pages := fi.Size() / pageSize
	corruptPage(t, path, pages/2)

	_, openErr := Open(path)
	if err := openErr; err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "page") {
		t.Fatalf("opening a damaged file: %v; want a refusal naming %s and the first problem", err, path)
	}
	problems, err := Check(ctx, path)
	if err != nil || len(problems) == 0 {
		t.Fatalf("check of a damaged file: %v, %v", problems, err)
	}
	t.Logf("open: %v\ncheck: %q", openErr, problems)

	salvaged := path + ".salvaged"
	rep, err := Salvage(ctx, path, salvaged)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("salvage: %d runs, %d records, %d sweeps; lost %q", rep.Runs, rep.Records, rep.Sweeps, rep.Lost)
	if _, err := Salvage(ctx, path, salvaged); err == nil {
		t.Error("salvage over an existing file")
	}
	s2, err := Open(salvaged)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if problems, err := Check(ctx, salvaged); err != nil || len(problems) != 0 {
		t.Errorf("the salvaged file checks as %v, %v", problems, err)
	}
	total := 0
	for _, id := range ids {
		r, err := s2.Get(ctx, id)
		if err != nil {
			continue // lost whole: said in rep.Lost
		}
		got, err := s2.Records(ctx, id, 0, 0, -1)
		if err != nil || len(got) != r.Traces[0].Records {
			t.Errorf("run %s: %d records read, %d reported, %v", id, len(got), r.Traces[0].Records, err)
		}
		checkRecords(t, got, want[id][:len(got)])
		if len(got) < len(want[id]) && (r.Status != StatusFailed || !strings.Contains(r.Message, "salvaged")) {
			t.Errorf("run %s lost records but reads %s %q", id, r.Status, r.Message)
		}
		total += len(got)
	}
	if total != rep.Records || total == 0 {
		t.Errorf("%d records read back, salvage reported %d", total, rep.Records)
	}
}

// Salvage keeps what users made beside the runs' records: a run opened
// from outside stays marked with its token's hash, runs and sweeps keep
// their names, notes and stars, the verifications and the names uploads
// were sent with are copied (a verification of a run that was not copied
// is left out).
func TestSalvageKeepsWhatUsersMade(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	out := testRun("lasso", "mine")
	out.Spec.Outside, out.TokenHash = true, []byte("0123456789abcdef0123456789abcdef")
	out.Name, out.Note, out.Starred = "my solver", "a note", true
	id, err := s.PutRun(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	swID, err := s.PutSweep(ctx, &Sweep{Axes: []byte(`[]`)})
	if err != nil {
		t.Fatal(err)
	}
	name, note, star := "ρ study", "why", true
	if err := s.UpdateSweep(ctx, swID, Edit{Name: &name, Note: &note, Starred: &star}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	if _, err := s.AddVerification(ctx, &Verification{RunID: id, At: at, Outcome: VerifyReproduced, Records: 12, Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("ab", 32)
	if err := s.SetUploadName(ctx, sum, "train.csv"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	to := path + ".salvaged"
	rep, err := Salvage(ctx, path, to)
	if err != nil || len(rep.Lost) != 0 || rep.Runs != 1 || rep.Sweeps != 1 {
		t.Fatalf("salvage of a sound store: %+v, %v", rep, err)
	}
	s2, err := Open(to)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Outside || got.Name != "my solver" || got.Note != "a note" || !got.Starred {
		t.Errorf("salvaged run: outside %v, %q %q starred %v", got.Outside, got.Name, got.Note, got.Starred)
	}
	var hash []byte
	if err := s2.db.QueryRowContext(ctx, `SELECT token_hash FROM runs WHERE id = ?`, id).Scan(&hash); err != nil || string(hash) != string(out.TokenHash) {
		t.Errorf("salvaged token hash %q, %v", hash, err)
	}
	sw, err := s2.GetSweep(ctx, swID)
	if err != nil || sw.Name != name || sw.Note != note || !sw.Starred {
		t.Errorf("salvaged sweep %+v, %v", sw, err)
	}
	vs, err := s2.Verifications(ctx, id)
	if err != nil || len(vs) != 1 || vs[0].Records != 12 || !vs[0].At.Equal(at) || vs[0].Version != "v1" {
		t.Errorf("salvaged verifications %+v, %v", vs, err)
	}
	names, err := s2.UploadNames(ctx, []string{sum})
	if err != nil || names[sum] != "train.csv" {
		t.Errorf("salvaged upload names %v, %v", names, err)
	}
}
