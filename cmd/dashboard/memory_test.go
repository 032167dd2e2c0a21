package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
)

// procKB reads a "kB" field (VmRSS, VmHWM) of /proc/PID/status, in bytes.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("the server's memory: %v (the test needs Linux's /proc)", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status: %q: %v", pid, l, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// waitFinished polls a run until it is no longer queued or running, for at
// most limit, and returns its status.
func waitFinished(t *testing.T, base, id string, limit time.Duration) runStatus {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := statusOf(t, base, id)
		if st.Status != "queued" && st.Status != "running" {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after %v (%d records)", id, st.Status, limit, st.Records)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const mib = 1 << 20

// The memory tests measure their own server process (its VmHWM and VmRSS),
// which other tests' processes do not change: they call t.Parallel, so
// that their seconds of work overlap the other tests' waits.

// A live run of 2 000 000 records through a real server process under -mem
// 512MiB: the server's peak resident set stays under the budget plus
// session.BaseMemory, and once the run has ended its memory goes back to
// the system within a minute (the resident set within 64 MiB of the idle
// server's).
func TestServeMemoryStaysInBudget(t *testing.T) {
	t.Parallel()
	c := startChild(t, "-db", filepath.Join(t.TempDir(), "runs.db"), "-mem", "512MiB")
	pid := c.cmd.Process.Pid
	idle := procKB(t, pid, "VmRSS")
	id := post(t, c.url+"/api/runs", `{"problem":"toy-polygon","algorithms":[{"algo":"fw"}],"iters":1999999}`)
	st := waitFinished(t, c.url, id, 10*time.Minute)
	if st.Status != "done" || st.Records != 2_000_000 {
		t.Fatalf("the run ended %s with %d records, want done with 2000000", st.Status, st.Records)
	}
	peak, limit := procKB(t, pid, "VmHWM"), int64(512*mib+session.BaseMemory)
	t.Logf("idle %.0f MiB, peak %.0f MiB (budget 512 MiB + base %d MiB)", float64(idle)/mib, float64(peak)/mib, session.BaseMemory/mib)
	if peak > limit {
		t.Errorf("peak RSS %.0f MiB, over the budget of 512 MiB plus the base of %d MiB", float64(peak)/mib, session.BaseMemory/mib)
	}
	ended := time.Now()
	for {
		rss := procKB(t, pid, "VmRSS")
		if rss <= idle+64*mib {
			t.Logf("RSS %.0f MiB %.1fs after the run ended", float64(rss)/mib, time.Since(ended).Seconds())
			break
		}
		if time.Since(ended) > time.Minute {
			t.Fatalf("RSS still %.0f MiB a minute after the run ended (idle %.0f MiB)", float64(rss)/mib, float64(idle)/mib)
		}
		time.Sleep(time.Second)
	}
}

// Four runs that together ask more than -mem 512MiB: the three that fit run
// side by side within the budget plus session.BaseMemory, and the fourth is
// refused with 429 naming the budget and its flag.
func TestServeMemoryBudgetRefusesTheRunOver(t *testing.T) {
	t.Parallel()
	c := startChild(t, "-db", filepath.Join(t.TempDir(), "runs.db"), "-mem", "512MiB")
	pid := c.cmd.Process.Pid
	// 1 200 000 records each: 146.5 MiB reserved at 128 bytes a record.
	const run = `{"problem":"toy-polygon","algorithms":[{"algo":"fw"}],"iters":1199999}`
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, post(t, c.url+"/api/runs", run))
	}
	resp, err := http.Post(c.url+"/api/runs", "application/json", strings.NewReader(run))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "memory budget of 512.0 MiB (-mem)") {
		t.Fatalf("the fourth run: %d %s, want 429 naming the memory budget of 512.0 MiB (-mem)", resp.StatusCode, body)
	}
	for _, id := range ids {
		if st := statusOf(t, c.url, id); st.Status != "running" && st.Status != "queued" {
			t.Fatalf("run %s is %s when the fourth was refused: the four did not ask together", id, st.Status)
		}
	}
	for _, id := range ids {
		if st := waitFinished(t, c.url, id, 10*time.Minute); st.Status != "done" || st.Records != 1_200_000 {
			t.Fatalf("run %s ended %s with %d records", id, st.Status, st.Records)
		}
	}
	peak, limit := procKB(t, pid, "VmHWM"), int64(512*mib+session.BaseMemory)
	t.Logf("peak %.0f MiB with three runs of 1 200 000 records (budget 512 MiB + base %d MiB)", float64(peak)/mib, session.BaseMemory/mib)
	if peak > limit {
		t.Errorf("peak RSS %.0f MiB, over the budget of 512 MiB plus the base of %d MiB", float64(peak)/mib, session.BaseMemory/mib)
	}
}
