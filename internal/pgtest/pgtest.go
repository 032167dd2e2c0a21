// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb and
// pg_ctl of Debian's PostgreSQL (15 unless FWLAB_PG_BIN names another bin
// folder) make a cluster in a temporary folder that listens on a Unix socket
// in that folder only, and the test's cleanup stops it and removes the
// folder. PostgreSQL refuses to run as root, so when the tests run as root
// the cluster runs as the postgres user, which then owns the folder.
//
// A test that needs PostgreSQL calls Start. Where the binaries are missing
// it fails when the CI environment variable is set, and otherwise skips with
// a message on standard error that names what to install.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultBin is where Debian installs PostgreSQL 15's server programs.
const DefaultBin = "/usr/lib/postgresql/15/bin"

// User is the database superuser of a test cluster.
const User = "fwlab"

// Cluster is a running throwaway PostgreSQL cluster.
type Cluster struct {
	Dir  string // the cluster's folder: data/, the socket and the log
	bin  string
	cred *syscall.Credential // nil: run as ourselves
	dbs  atomic.Int64
}

// Bin returns the folder of the PostgreSQL server programs to use.
func Bin() string {
	if b := os.Getenv("FWLAB_PG_BIN"); b != "" {
		return b
	}
	return DefaultBin
}

// Available reports whether initdb and pg_ctl are there, and why not.
func Available() error {
	for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(Bin(), p)); err != nil {
			return fmt.Errorf("PostgreSQL's %s not found in %s (Debian: apt-get install postgresql; or set FWLAB_PG_BIN)", p, Bin())
		}
	}
	return nil
}

// Require fails the test under CI when PostgreSQL is missing, and skips it
// loudly otherwise.
func Require(tb testing.TB) {
	tb.Helper()
	err := Available()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("pgtest: %v (CI is set, so this fails rather than skips)", err)
	}
	fmt.Fprintf(os.Stderr, "*** %s SKIPPED: %v ***\n", tb.Name(), err)
	tb.Skipf("pgtest: %v", err)
}

// Start starts a cluster for the test and registers its removal. Its
// server does not sync to disk (fsync off): fast, and safe for every
// restart a test makes, not for a crash of the machine.
func Start(tb testing.TB) *Cluster { return startFor(tb, false) }

// StartDurable is Start with PostgreSQL's defaults for durability (fsync
// and full page writes on), for benchmarks that measure the database.
func StartDurable(tb testing.TB) *Cluster { return startFor(tb, true) }

func startFor(tb testing.TB, durable bool) *Cluster {
	tb.Helper()
	Require(tb)
	c, err := start(durable)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		c.logTail(tb)
		if err := c.Remove(); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// logTail logs the end of the server's log when the test failed: a
// connection the server dropped, a backend that crashed, say why there.
func (c *Cluster) logTail(tb testing.TB) {
	if !tb.Failed() {
		return
	}
	b, err := os.ReadFile(filepath.Join(c.Dir, "log"))
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	tb.Logf("pgtest: the end of the PostgreSQL log of %s:\n%s", c.Dir, strings.Join(lines, "\n"))
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns the cluster the tests of this process share, started by
// the first caller; the package's TestMain must call Main to remove it.
// Tests on it keep apart by taking a database each (NewDB).
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	Require(tb)
	shared.once.Do(func() { shared.c, shared.err = start(false) })
	if shared.err != nil {
		tb.Fatalf("pgtest: %v", shared.err)
	}
	return shared.c
}

// Main runs the tests and then removes the shared cluster, if one was
// started: call it from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Remove(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

func start(durable bool) (*Cluster, error) {
	c := &Cluster{bin: Bin()}
	dir, err := os.MkdirTemp("", "fwlab-pg-")
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root needs the postgres user to run the cluster as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", User, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	lines := []string{
		"listen_addresses = ''",
		"unix_socket_directories = '" + dir + "'",
		"max_connections = 200",
		"shared_buffers = 32MB",
		"dynamic_shared_memory_type = mmap",
	}
	if !durable {
		// a throwaway cluster: the OS outlives every restart a test makes
		lines = append(lines, "fsync = off", "full_page_writes = off")
	}
	conf := strings.Join(lines, "\n") + "\n"
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("configuring the cluster: %w", err)
	}
	if err := c.Startup(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) data() string { return filepath.Join(c.Dir, "data") }

// run runs one of PostgreSQL's programs as the cluster's user.
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// Startup starts the cluster's server (again) and waits until it takes
// connections.
func (c *Cluster) Startup() error {
	if out, err := c.run("pg_ctl", "start", "-D", c.data(), "-w", "-t", "60", "-l", filepath.Join(c.Dir, "log")); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Shutdown stops the cluster's server with the given pg_ctl mode (fast:
// disconnect the clients and stop cleanly; immediate: as a crash would).
func (c *Cluster) Shutdown(mode string) error {
	if out, err := c.run("pg_ctl", "stop", "-D", c.data(), "-w", "-t", "60", "-m", mode); err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %w\n%s", mode, err, out)
	}
	return nil
}

// Remove stops the server and removes the cluster's folder.
func (c *Cluster) Remove() error {
	var err error
	if _, statErr := os.Stat(filepath.Join(c.data(), "postmaster.pid")); statErr == nil {
		err = c.Shutdown("immediate")
	}
	if rmErr := os.RemoveAll(c.Dir); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// URL returns the connection URL of a database of the cluster.
func (c *Cluster) URL(db string) string {
	q := url.Values{}
	q.Set("host", c.Dir)
	return (&url.URL{Scheme: "postgres", User: url.User(User), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// NewDB creates an empty database in the cluster and returns its URL.
func (c *Cluster) NewDB(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", c.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connecting: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	if c == shared.c { // Start's cleanup logs a cluster of the test's own
		tb.Cleanup(func() { c.logTail(tb) })
	}
	return c.URL(name)
}
