package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const crashEnv = "FWLAB_STORE_CRASH_WRITER"

// crashWriter is the child process of TestCrashKeepsCommittedBatches: it
// streams a run to the store at path, a batch every 100 ms, and prints the
// record count after each commit.
func crashWriter(path string) {
	ctx := context.Background()
	s, err := Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	id, err := s.PutRun(ctx, testRun("lasso", "ssfw-as"))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("run", id)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for {
		recs := randRecords(rng, 50)
		if err := s.AppendRecords(ctx, id, 0, recs); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		n += len(recs)
		fmt.Println("committed", n)
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCrashKeepsCommittedBatches(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashWriter(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsCommittedBatches$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		id        string
		committed int
		lastAt    time.Time
		childErr  string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			mu.Lock()
			switch {
			case len(f) == 2 && f[0] == "run":
				id = f[1]
			case len(f) == 2 && f[0] == "committed":
				committed, _ = strconv.Atoi(f[1])
				lastAt = time.Now()
			case len(f) > 0 && f[0] == "error":
				childErr = sc.Text()
			}
			mu.Unlock()
		}
	}()
	// let it stream for a while, then kill it at a random moment of its cycle
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		c, e := committed, childErr
		mu.Unlock()
		if e != "" {
			t.Fatalf("child: %s", e)
		}
		if c >= 15*50 || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	cmd.Wait()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if id == "" || committed == 0 {
		t.Fatalf("the child committed nothing (run %q)", id)
	}
	if gap := killedAt.Sub(lastAt); gap > time.Second {
		t.Fatalf("last commit %v before the kill: the writer was not streaming", gap)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusInterrupted || r.Traces[0].Status != StatusInterrupted {
		t.Errorf("after the kill the run is %s (trace %s), want interrupted", r.Status, r.Traces[0].Status)
	}
	recs, err := s.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	// every batch reported committed is there; at most the one in flight
	// (committed but not yet reported) is more
	if len(recs) < committed || len(recs) > committed+50 || r.Traces[0].Records != len(recs) {
		t.Fatalf("%d records stored (trace says %d), %d reported committed", len(recs), r.Traces[0].Records, committed)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var all = randRecords(rng, 50)
	for len(all) < len(recs) {
		all = append(all, randRecords(rng, 50)...)
	}
	checkRecords(t, recs, all[:len(recs)])
	t.Logf("killed after %d records (last commit %v before the kill); %d stored", committed, killedAt.Sub(lastAt).Round(time.Millisecond), len(recs))
}
