package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store"
)

// The flags several commands share, each defined here once: the run store
// -db, the data folder -data, a worker's -slots, -drain and -rescue-after.
// A flag has one name and one value rule everywhere; its default and help
// say what it means for the command that declares it (serve's -db may be a
// file, worker's must be PostgreSQL), so each command's is in the tables
// below, by the name of its flag set.

// sharedFlags declares shared flags on one command's flag set.
type sharedFlags struct{ fs *flag.FlagSet }

// shared returns the helper declaring shared flags on fs, whose name
// ("dashboard serve", …) picks each flag's default and help.
func shared(fs *flag.FlagSet) sharedFlags { return sharedFlags{fs} }

// use is the entry of a table for this command: a missing one is a
// mistake in the tables, found by the tests of each command's -h.
func use[T any](s sharedFlags, flagName string, table map[string]T) T {
	v, ok := table[s.fs.Name()]
	if !ok {
		panic(fmt.Sprintf("flags.go: no -%s for %q", flagName, s.fs.Name()))
	}
	return v
}

// dbFlags is what -db means for each command; a store default means the
// default store file (store.DefaultPath).
var dbFlags = map[string]struct {
	storeDefault bool
	help         string
}{
	"dashboard serve":  {true, "the run store: a file, created on first start (\":memory:\" keeps nothing), or a PostgreSQL database postgres://USER@HOST/DB?… (shared with dashboard worker processes)"},
	"dashboard import": {true, "the run store: its file, or a PostgreSQL database (postgres://USER@HOST/DB?…)"},
	"dashboard verify": {false, "verify runs of this run store (a file, or a PostgreSQL database postgres://…; IDs are run ids) instead of bundle files"},
	"dashboard worker": {false, "the PostgreSQL run store, postgres://USER@HOST/DB?… (required; the server's -db)"},
	"dashboard submit": {false, "the PostgreSQL run store, postgres://USER@HOST/DB?… (required)"},
	"dashboard cancel": {false, "the PostgreSQL run store, postgres://USER@HOST/DB?… (required)"},
}

// db declares -db, the run store; defErr says why there is no default
// store file when the command has one and it could not be found.
func (s sharedFlags) db() (db *string, defErr error) {
	d := use(s, "db", dbFlags)
	def := ""
	if d.storeDefault {
		def, defErr = store.DefaultPath()
	}
	return s.fs.String("db", def, d.help), defErr
}

// dataFlags is what -data means for each command, with its default
// (defaultData: ../shared/data when it exists).
var dataFlags = map[string]struct {
	def  string
	help string
}{
	"dashboard serve":        {defaultData, "directory of data sets: runs read data files only from it and from the uploads (\"\" for none; the default is ../shared/data when it exists)"},
	"dashboard worker":       {defaultData, "the worker's data folder: a run's files named from the server's -data folder are read from it and must hold the same bytes (checked by SHA-256), and its ocr/ holds the OCR set (\"\" for none; the default is ../shared/data when it exists)"},
	"dashboard verify":       {"", "the data folder: a run whose spec names data files reads them here, by their paths relative to it (an absolute path, or one that climbs out, is refused; without -data no data file is read)"},
	"dashboard solve -sweep": {".", "the data folder: the cells read the data files their specs name by paths relative to it (an absolute path, or one that climbs out, is refused)"},
}

// defaultData stands in dataFlags for defaultDataDir().
const defaultData = "\x00default"

// data declares -data, the folder the runs' data files are read from.
func (s sharedFlags) data() *string {
	d := use(s, "data", dataFlags)
	def := d.def
	if def == defaultData {
		def = defaultDataDir()
	}
	return s.fs.String("data", def, d.help)
}

// workerFlags is what a worker's flags mean for serve (whose worker is
// optional) and for dashboard worker.
var workerFlags = map[string]struct {
	slots                 int
	slotsHelp             string
	drainHelp, rescueHelp string
}{
	"dashboard serve": {-1,
		"runs this server runs at once: N ≥ 1 is -max-active N; -1: -max-active. With -db postgres://… the runs and sweeps started through the server are queued for workers, and a server with slots is one of them (named HOST-PID, as \"dashboard worker\" by default), taking queued jobs, its own and others'; 0 (PostgreSQL only): none, a pure front end",
		"with -db postgres://… and slots: on SIGTERM or SIGINT, time the runs the server's worker is running get to finish before they are given back to the queue",
		"with -db postgres://… and slots: a run whose worker's heartbeat (every 2s) is older than this is queued again, as \"dashboard worker -rescue-after\" (the same on every worker; at least 4s)"},
	"dashboard worker": {runtime.NumCPU(),
		"runs at once",
		"on SIGTERM or SIGINT, time the running runs get to finish before they are given back to the queue",
		"a run whose worker's heartbeat (every 2s) is older than this is taken for lost and queued again, to run from the start elsewhere; runs may last any time; at least 4s; the same on every worker (30s: a dead worker's run restarts within half a minute, while a busy machine or a database restart of a few seconds costs no run its work)"},
}

// slots declares -slots, the runs a worker runs at once.
func (s sharedFlags) slots() *int {
	w := use(s, "slots", workerFlags)
	return s.fs.Int("slots", w.slots, w.slotsHelp)
}

// drain declares -drain, the time running runs get to finish on SIGTERM.
func (s sharedFlags) drain() *time.Duration {
	return s.fs.Duration("drain", 30*time.Second, use(s, "drain", workerFlags).drainHelp)
}

// rescueAfter declares -rescue-after, the age of a worker's heartbeat after
// which its run is queued again.
func (s sharedFlags) rescueAfter() *time.Duration {
	return s.fs.Duration("rescue-after", queue.DefaultRescueAfter, use(s, "rescue-after", workerFlags).rescueHelp)
}

// checkWorkerTimes is the rule of -rescue-after and -drain.
func checkWorkerTimes(rescue, drain time.Duration) error {
	switch {
	case rescue < 2*queue.DefaultBeatEvery:
		return usageError("-rescue-after: must be at least two heartbeats (%v), got %v", 2*queue.DefaultBeatEvery, rescue)
	case drain < 0:
		return usageError("-drain: must not be negative, got %v", drain)
	}
	return nil
}

// useDataDir checks that -data names a readable folder and points the OCR
// scenario at its ocr folder (unless the environment names another place),
// as a server and a worker both find it.
func useDataDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError("-data %q must be a readable directory", dir)
	}
	if os.Getenv(ssvm.EnvOCR) == "" {
		if fi, err := os.Stat(filepath.Join(dir, "ocr")); err == nil && fi.IsDir() {
			_ = os.Setenv(ssvm.EnvOCR, filepath.Join(dir, "ocr"))
		}
	}
	return nil
}
