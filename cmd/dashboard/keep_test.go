package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// -keep trims in the background once the server listens: on a store of
// 20 000 runs (a trim of seconds) the server lists the untrimmed store
// as soon as it prints its address, and the trim then leaves the runs -keep
// keeps.
func TestKeepTrimsAfterTheServerListens(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	ctx := context.Background()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Run{Problem: "test-fake", Params: spec.Params{"n": "10"}, Algorithms: []spec.Algo{{Algo: "fw"}}, Iters: 10}
	r := &store.Run{Spec: sp, Status: store.StatusDone, Version: "test", Created: time.Now().Add(-time.Hour), Ended: time.Now().Add(-time.Hour)}
	first, err := st.PutRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// 19 999 copies of the first run, entered an hour ago (out of Trim's
	// grace), written directly: through PutRun they would take minutes
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	for i := 1; i < n; i++ {
		// the copies differ from each other in the last four characters
		// and from the first run in the fifth from last, so none can
		// meet the first run's id (it is random: its last four may
		// spell any i)
		id := []byte(first)
		if id[len(id)-5] == 'a' {
			id[len(id)-5] = 'b'
		} else {
			id[len(id)-5] = 'a'
		}
		for j, k := len(id)-1, i; j >= len(id)-4; j, k = j-1, k/26 {
			id[j] = byte('a' + k%26)
		}
		if _, err := tx.Exec(`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, entered_us)
			SELECT ?, created_us - ?, ended_us, status, problem, spec, version, entered_us - 3600000000 - ? FROM runs WHERE id = ?`,
			string(id), i, i, first); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`UPDATE runs SET entered_us = entered_us - 3600000000 WHERE id = ?`, first); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	c := startChild(t, "-db", db, "-keep", "2")
	total := func() int {
		var page struct{ Total int }
		if err := json.Unmarshal(get(t, c.url+"/api/runs"), &page); err != nil {
			t.Fatal(err)
		}
		return page.Total
	}
	if got := total(); got <= 2 {
		t.Fatalf("%d runs listed as soon as the server listened: the trim ran before it listened", got)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for total() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs two minutes after the server started, want the 2 -keep keeps", total())
		}
		time.Sleep(100 * time.Millisecond)
	}
	said := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-c.out:
			if !ok {
				t.Fatal("the server stopped")
			}
			if strings.Contains(line, "-keep 2: 19998 older runs deleted") {
				return
			}
		case <-said:
			t.Fatal("the server did not say what -keep deleted")
		}
	}
}
