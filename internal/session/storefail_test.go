//go:build linux

package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// childEnv names the store directory of the child process of
// TestRunEndsFailedWhenWritesFail.
const childEnv = "FWLAB_TEST_FSIZE_STORE"

// A run whose store stops taking writes ends failed, naming the file and
// the cause, never done; after a restart it reports the records the file
// holds, a whole prefix of those made. The fault is real and needs no
// root: a child process runs the session with its file-size limit
// (RLIMIT_FSIZE) 4 MB above the store's size (room for a few of the
// appender's transactions, store.MaxTxBytes each), so that SQLite's writes
// past it fail (EFBIG) as on a full disk.
func TestRunEndsFailedWhenWritesFail(t *testing.T) {
	if dir := os.Getenv(childEnv); dir != "" {
		runLimitedChild(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunEndsFailedWhenWritesFail$", "-test.v", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var res session.Status
	found := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			found = json.Unmarshal([]byte(l), &res) == nil
		}
	}
	if err != nil || !found {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "fwlab.db")
	if res.Status != session.StatusFailed || !strings.Contains(res.Message, path) || !strings.Contains(res.Message, "store") {
		t.Errorf("the run with its writes refused reported %s %q (%d records); want failed naming %s", res.Status, res.Message, res.Records, path)
	}

	// restart (without the limit): what the run reports is what is stored
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	r, err := st.Get(ctx, res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusFailed || !strings.Contains(r.Message, path) {
		t.Errorf("after a restart the run is %s (%q); want failed naming the store", r.Status, r.Message)
	}
	tr := r.Traces[0]
	n := 0
	if err := st.EachRecord(ctx, res.ID, 0, 0, -1, func(i int, rec *solver.Record) error {
		if rec.K != i {
			t.Fatalf("stored record %d has k %d: not a prefix of the records made", i, rec.K)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != tr.Records || n == 0 || n >= res.Records {
		t.Errorf("the store holds %d records and reports %d; the run made %d", n, tr.Records, res.Records)
	}
	t.Logf("writes refused: the run reported %s with %d records made, %d of them stored (%s); after a restart %s", res.Status, res.Records, n, res.Message, r.Status)
}

// runLimitedChild runs one long run on a store whose file may grow only a
// little, and prints its final status.
func runLimitedChild(t *testing.T, dir string) {
	path := filepath.Join(dir, "fwlab.db")
	st := openStore(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails (EFBIG) instead of killing the process
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := uint64(fi.Size() + 4<<20)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: old.Max}); err != nil {
		t.Fatalf("cannot limit the file size: %v", err)
	}
	m := session.NewManager(session.Options{Store: st})
	r, err := m.Create(context.Background(), fakeSpec(1_500_000, nil, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	status := r.Status()
	// the disk has room again: the run's end, refused, is written late
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run's end in the store", func() bool {
		sr, err := st.Get(context.Background(), r.ID)
		return err == nil && sr.Status == store.StatusFailed
	})
	b, _ := json.Marshal(status)
	os.Stdout.WriteString("RESULT " + string(b) + "\n")
	m.Close(context.Background())
	st.Close()
}
