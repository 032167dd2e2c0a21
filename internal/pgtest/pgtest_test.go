package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCluster starts a cluster, writes to a fresh database, restarts the
// server and reads the row back, then checks that Remove leaves nothing.
func TestCluster(t *testing.T) {
	c := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u := c.NewDB(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := c.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, u); err == nil {
		t.Fatal("connected to a stopped server")
	}
	if err := c.Startup(); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := conn.QueryRow(ctx, `SELECT v FROM t`).Scan(&v); err != nil || v != "kept" {
		t.Fatalf("after a restart: %q, %v", v, err)
	}
	conn.Close(ctx)
	if c.NewDB(t) == u {
		t.Fatal("NewDB gave the same database twice")
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Fatalf("the cluster's folder is still there: %v", err)
	}
}
