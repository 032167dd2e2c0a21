package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// TestWorkerBuildErrorNamesTheUsersFile: a run over uploaded files that a
// worker cannot make (y has fewer responses than X has rows) ends failed,
// and the message every front end on the database serves names the files
// as the user sent them, never the worker's cache path or the content's
// hash: the one that took the uploads, and another that was sent the run
// and never saw the files' names.
func TestWorkerBuildErrorNamesTheUsersFile(t *testing.T) {
	db, st := pgStore(t)
	ctx := context.Background()
	x, _ := lassoCSV(3, 30, 6)
	_, yShort := lassoCSV(3, 20, 6)
	srv := startChild(t, "-db", db, "-slots", "0")
	other := startChild(t, "-db", db, "-slots", "0")
	ux, uy := upload(t, srv.url, "my_x.csv", x), upload(t, srv.url, "y_short.csv", yShort)
	cache := t.TempDir()
	w := startWorkerProc(t, db, "w0", "-slots", "1", "-cache", cache)
	defer func() { w.cmd.Process.Kill(); <-w.done }()
	id := post(t, other.url+"/api/runs", `{"problem":"lasso","params":{"x":"`+ux+`","y":"`+uy+`","lambda":"1"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":100}`)
	waitUntil(t, 2*time.Minute, "the run's end", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && !store.Live(r.Status)
	})
	for _, fe := range []*child{other, srv} {
		var got struct{ Status, Message string }
		if err := json.Unmarshal(get(t, fe.url+"/api/runs/"+id), &got); err != nil {
			t.Fatal(err)
		}
		if got.Status != store.StatusFailed || !strings.Contains(got.Message, "y_short.csv") {
			t.Fatalf("%s: run %s, %q; want failed naming y_short.csv\n%s", fe.url, got.Status, got.Message, w.output())
		}
		t.Logf("the message at %s: %s", fe.url, got.Message)
		for _, bad := range []string{cache, pgstore.SHA256(yShort)[:12], pgstore.SHA256(x)[:12], "upload"} {
			if strings.Contains(got.Message, bad) {
				t.Errorf("the message at %s %q names %q, not the user's file", fe.url, got.Message, bad)
			}
		}
	}
}
