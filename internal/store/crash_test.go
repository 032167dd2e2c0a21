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

	"github.com/fwlab/fwlab/internal/solver"
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

// appenderWriter is the child process of TestCrashLosesAtMostASecond: a
// run streams a record every millisecond through an Appender; every 20 ms
// it prints how many records it has handed over.
func appenderWriter(path string) {
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
	a := s.NewAppender(id, DefaultFlushInterval)
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; ; n++ {
		a.Add(0, randRecords(rng, 1)...)
		if n%20 == 0 {
			fmt.Println("added", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A run streaming through an Appender and killed with SIGKILL keeps every
// record handed over more than a second before the kill.
func TestCrashLosesAtMostASecond(t *testing.T) {
	if path := os.Getenv(crashEnv + "_APPENDER"); path != "" {
		appenderWriter(path)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLosesAtMostASecond$")
	cmd.Env = append(os.Environ(), crashEnv+"_APPENDER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type mark struct {
		n  int
		at time.Time
	}
	var (
		mu    sync.Mutex
		id    string
		marks []mark
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
			case len(f) == 2 && f[0] == "added":
				n, _ := strconv.Atoi(f[1])
				marks = append(marks, mark{n, time.Now()})
			}
			mu.Unlock()
		}
	}()
	start := time.Now()
	for time.Since(start) < 30*time.Second {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		ok := len(marks) > 0 && marks[len(marks)-1].at.Sub(marks[0].at) > 2*time.Second
		mu.Unlock()
		if ok {
			break
		}
	}
	time.Sleep(time.Duration(rand.IntN(250)) * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	killedAt := time.Now()
	cmd.Wait()
	<-done
	// records handed over a second before the kill
	safe := 0
	for _, m := range marks {
		if m.at.Before(killedAt.Add(-time.Second)) {
			safe = m.n
		}
	}
	if id == "" || safe == 0 {
		t.Fatalf("the child streamed nothing a second before the kill (run %q, %d marks)", id, len(marks))
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
	recs, err := s.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	last := marks[len(marks)-1].n
	if r.Status != StatusInterrupted || len(recs) < safe || len(recs) > last+20 {
		t.Fatalf("run %s with %d records; %d were handed over a second before the kill, %d in all", r.Status, len(recs), safe, last)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var want []solver.Record
	for len(want) < len(recs) {
		want = append(want, randRecords(rng, 1)...)
	}
	checkRecords(t, recs, want)
	t.Logf("%d records handed over, %d a second before the kill, %d kept", last, safe, len(recs))
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
