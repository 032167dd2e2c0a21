package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// liveRun is a run opened from outside through a server's API.
type liveRun struct {
	base, id, token string
	k               int
}

func openLive(t *testing.T, base, trace string) *liveRun {
	t.Helper()
	code, b := liveCall(t, base+"/api/live/runs", "", fmt.Sprintf(`{"problem": "my solver", "traces": [%q]}`, trace))
	var out struct{ ID, Token string }
	if err := json.Unmarshal(b, &out); err != nil || code != http.StatusCreated {
		t.Fatalf("opening a run from outside at %s: %d %s", base, code, b)
	}
	return &liveRun{base: base, id: out.ID, token: out.Token}
}

// send appends one record; it reports the answer's status.
func (l *liveRun) send(t *testing.T, trace string) int {
	t.Helper()
	code, _ := liveCall(t, l.base+"/api/live/runs/"+l.id+"/records", l.token,
		fmt.Sprintf(`{"records": [{"trace": %q, "k": %d, "passes": 0, "time_s": 0, "step": "pgd", "gamma": 0, "batch": 0, "active": 1, "objective": 1}]}`, trace, l.k))
	if code == http.StatusOK {
		l.k++
	}
	return code
}

func liveCall(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// On PostgreSQL, a run opened from outside lives on the server that opened
// it. When that server is killed, another server on the database ends the
// run failed once its heartbeat is older than -outside-idle and a fifth,
// saying why; a run whose client keeps logging into a live server is never
// taken for orphaned, however long it lasts. It does not call t.Parallel:
// its check that the run ends no sooner than the idle timeout after the
// kill holds only if the kill follows the run's last batch within a fifth
// of the timeout (0.4 s), which the other tests' load can stretch.
func TestOutsideRunOfAKilledServerEnds(t *testing.T) {
	db := pgtest.Shared(t).NewDB(t)
	a := startChild(t, "-db", db, "-outside-idle", "2s")
	b := startChild(t, "-db", db, "-outside-idle", "2s")
	orphan := openLive(t, a.url, "mine")
	if code := orphan.send(t, "mine"); code != http.StatusOK {
		t.Fatalf("a batch to server a: %d", code)
	}
	kept := openLive(t, b.url, "theirs")
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed := time.Now()
	type stored struct{ Status, Message string }
	read := func(id string) stored {
		var s stored
		if err := json.Unmarshal(get(t, b.url+"/api/runs/"+id), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// the kept run's client logs every 200 ms throughout: more than the
	// idle timeout and its fifth pass while it does
	var got stored
	for deadline := killed.Add(60 * time.Second); ; {
		if code := kept.send(t, "theirs"); code != http.StatusOK {
			t.Fatalf("a batch to server b's run %s, %v after a was killed: %d (%+v)", kept.id, time.Since(killed), code, read(kept.id))
		}
		if got = read(orphan.id); got.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s of the killed server is still %s %v after the kill", orphan.id, got.Status, time.Since(killed))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got.Status != "failed" || !strings.Contains(got.Message, "server that held the run stopped") {
		t.Fatalf("run %s of the killed server: %+v, want failed saying its server stopped", orphan.id, got)
	}
	if since := time.Since(killed); since < 2*time.Second {
		t.Errorf("run %s ended %v after the kill, before its idle timeout", orphan.id, since)
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if code := kept.send(t, "theirs"); code != http.StatusOK {
			t.Fatalf("a batch to the kept run %s: %d (%+v)", kept.id, code, read(kept.id))
		}
	}
	if s := read(kept.id); s.Status != "running" {
		t.Fatalf("the run a live server holds: %+v, want running", s)
	}
	// in the database too, as every other server reads it
	st, err := pgstore.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r, err := st.Get(context.Background(), kept.id); err != nil || r.Status != store.StatusRunning {
		t.Fatalf("the run a live server holds, in the database: %v %v", r.Status, err)
	}
	if code, body := liveCall(t, b.url+"/api/live/runs/"+kept.id+"/end", kept.token, `{"status": "converged"}`); code != http.StatusOK {
		t.Fatalf("ending the kept run: %d %s", code, body)
	}
	if s := read(kept.id); s.Status != "done" {
		t.Errorf("the kept run after its end: %+v", s)
	}
}
