package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store/pgstore"
)

func runStoreArgs(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := runStore(args, &out, &errb)
	return out.String(), errb.String(), code
}

// import twice stores one run; store check says ok, or lists the damage
// of a file with a page overwritten (exit 1); salvage copies what reads;
// usage errors exit 2.
func TestStoreCommands(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	if _, stderr, code := solve(t, "-problem", "lasso", "-algo", "ssfw-as,fista", "-iters", "3000", "-format", "json", "-out", file); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	db := filepath.Join(dir, "runs.db")
	out, stderr, code := runImportArgs("-db", db, file, file)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[1], "imported before") || strings.Fields(lines[0])[2] != strings.Fields(lines[1])[2] {
		t.Fatalf("importing a bundle twice: %d %q %s", code, out, stderr)
	}
	if out, _, code := runStoreArgs("check", db); code != 0 || out != db+": ok\n" {
		t.Errorf("check of a sound store: %d %q", code, out)
	}

	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(db, os.O_RDWR, 0)
	junk := bytes.Repeat([]byte{0xa5, 0x17, 0xff, 0x03}, 4096)
	f.WriteAt(junk, (fi.Size()/16384/2)*16384)
	f.Close()
	out, _, code = runStoreArgs("check", db)
	if code != 1 || !strings.Contains(out, "damaged") || !strings.Contains(out, "dashboard store salvage") {
		t.Errorf("check of a damaged store: %d %q", code, out)
	}
	var serr strings.Builder
	if code := serve(context.Background(), []string{"-db", db, "-addr", "localhost:0"}, io.Discard, &serr); code != 1 || !strings.Contains(serr.String(), db) || !strings.Contains(serr.String(), "damaged") {
		t.Errorf("serving a damaged store: %d %q", code, serr.String())
	}
	rescued := filepath.Join(dir, "rescued.db")
	out, stderr, code = runStoreArgs("salvage", db, rescued)
	if code != 0 || !strings.Contains(out, "copied from "+db) {
		t.Errorf("salvage: %d %q %s", code, out, stderr)
	}
	if out, _, code := runStoreArgs("check", rescued); code != 0 {
		t.Errorf("check of the salvaged store: %d %q", code, out)
	}
	if _, _, code := runStoreArgs("salvage", db, rescued); code != 1 {
		t.Errorf("salvage over an existing file: exit %d", code)
	}
	for _, args := range [][]string{{}, {"check"}, {"salvage", db}, {"fix", db}} {
		if _, _, code := runStoreArgs(args...); code != 2 {
			t.Errorf("store %v: exit %d, want 2", args, code)
		}
	}
}

// The import and store examples of docs/store.md run as written, in order,
// after its first solve example made run.json, and print what their
// comments say (the ids and counts aside).
func TestReadmeStoreExamples(t *testing.T) {
	doc := docText(t, "docs/store.md")
	dir := t.TempDir()
	t.Chdir(dir)
	if _, stderr, code := solve(t, "-problem", "lasso", "-algo", "ssfw-as,fista", "-iters", "300", "-format", "json", "-out", "run.json"); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	n := 0
	for _, l := range codeLines(doc) {
		words := shellWords(t, l)
		if len(words) < 5 || strings.Join(words[:3], " ") != "go run ./cmd/dashboard" ||
			!(words[3] == "store" || words[3] == "import" && words[4] == "-db") {
			continue
		}
		n++
		comment := ""
		if i := strings.Index(l, "# "); i >= 0 {
			comment = strings.TrimSpace(l[i+2:])
		}
		var out, errb bytes.Buffer
		var code int
		if words[3] == "store" {
			code = runStore(words[4:], &out, &errb)
		} else {
			code = runImport(words[4:], strings.NewReader(""), &out, &errb)
		}
		if code != 0 {
			t.Errorf("%s: exit %d: %s", l, code, errb.String())
			continue
		}
		// the comment's words, numbers and ids aside, appear in the output
		for _, w := range strings.Fields(strings.TrimPrefix(comment, "the second: ")) {
			if strings.ContainsAny(w, "0123456789") {
				continue
			}
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output %q lacks %q", l, out.String(), w)
			}
		}
	}
	if n < 3 {
		t.Errorf("found %d import and store examples in docs/store.md, want 3", n)
	}
}

// store data counts the data files of a PostgreSQL store; store reclaim
// removes those no run names kept over a day ago, not a fresh upload; a
// SQLite file is refused, naming the rule.
func TestStoreDataCommands(t *testing.T) {
	url, st := pgStore(t)
	ctx := context.Background()
	clock := time.Now()
	defer pgstore.SetClock(func() time.Time { return clock })()
	if _, err := st.PutDataFile(ctx, []byte("1,2\n3"), 0); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(2 * pgstore.DataFileGrace)
	if _, err := st.PutDataFile(ctx, []byte("fresh\n"), 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"data", url}, 0, url + ": 2 data files (11 bytes); no run names 2 (11 bytes), 1 of them (5 bytes) kept over a day ago\n"},
		{[]string{"reclaim", url}, 0, url + ": removed 1 data file (5 bytes)\n" + url + ": 1 data file (6 bytes); no run names 1 (6 bytes), 0 of them (0 bytes) kept over a day ago\n"},
		{[]string{"reclaim", url}, 0, url + ": removed 0 data files (0 bytes)\n" + url + ": 1 data file (6 bytes); no run names 1 (6 bytes), 0 of them (0 bytes) kept over a day ago\n"},
		{[]string{"data", filepath.Join(t.TempDir(), "runs.db")}, 2, ""},
		{[]string{"data"}, 2, ""},
	} {
		out, stderr, code := runStoreArgs(tc.args...)
		if code != tc.code || out != tc.out {
			t.Errorf("store %q: %d %q %s; want %d %q", tc.args, code, out, stderr, tc.code, tc.out)
		}
		if code == 2 && !strings.Contains(stderr, "PostgreSQL") && !strings.Contains(stderr, "wrong number") {
			t.Errorf("store %q: %q names no rule", tc.args, stderr)
		}
	}
}

// No command opens a PostgreSQL URL as a file: salvage and check refuse a
// URL (they work on SQLite files), every -db refuses a text meant for
// PostgreSQL that is not a URL (a slash lost, an upper-case scheme,
// libpq's key=value form), and none of them leaves anything in the
// folder it ran in.
func TestNoCommandOpensAPostgresURLAsAFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, stderr, code := solve(t, "-problem", "lasso", "-algo", "fw", "-iters", "50", "-format", "json", "-out", "run.json"); code != 0 {
		t.Fatalf("solve: %s", stderr)
	}
	if _, stderr, code := runImportArgs("-db", "old.db", "run.json"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	before := listDir(t, dir)
	const url = "postgres://fwlab@/postgres?host=/nonexistent"
	mangled := []string{"postgres:/fwlab@/postgres?host=/tmp", "POSTGRES://fwlab@/postgres", "host=/tmp dbname=fwlab"}
	type cmd struct {
		name string
		run  func() (string, int)
		want int
	}
	var cmds []cmd
	store := func(args ...string) func() (string, int) {
		return func() (string, int) { _, e, c := runStoreArgs(args...); return e, c }
	}
	cmds = append(cmds,
		cmd{"store salvage OLD URL", store("salvage", "old.db", url), 2},
		cmd{"store salvage URL NEW", store("salvage", url, "new.db"), 2},
		cmd{"store check URL", store("check", url), 2},
	)
	for _, m := range mangled {
		var e bytes.Buffer
		cmds = append(cmds,
			cmd{"store salvage OLD " + m, store("salvage", "old.db", m), 2},
			cmd{"store check " + m, store("check", m), 2},
			cmd{"store data " + m, store("data", m), 2},
			cmd{"import -db " + m, func() (string, int) { _, e, c := runImportArgs("-db", m, "run.json"); return e, c }, 1},
			cmd{"verify -db " + m, func() (string, int) { _, e, c := runVerifyArgs("-db", m, "abc"); return e, c }, 1},
			cmd{"serve -db " + m, func() (string, int) {
				e.Reset()
				// a server that took m for a file would serve until ctx ends
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c := serve(ctx, []string{"-db", m, "-addr", "localhost:0"}, io.Discard, &e)
				return e.String(), c
			}, 1},
			cmd{"worker -db " + m, func() (string, int) {
				e.Reset()
				c := runWorker([]string{"-db", m}, io.Discard, &e)
				return e.String(), c
			}, 2},
			cmd{"submit -db " + m, func() (string, int) {
				e.Reset()
				c := runSubmit([]string{"-db", m, "run.json"}, strings.NewReader(""), io.Discard, &e)
				return e.String(), c
			}, 2},
			cmd{"cancel -db " + m, func() (string, int) {
				e.Reset()
				c := runCancel([]string{"-db", m, "abc"}, io.Discard, &e)
				return e.String(), c
			}, 2},
		)
	}
	for _, c := range cmds {
		stderr, code := c.run()
		if code != c.want || !strings.Contains(stderr, "PostgreSQL") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and a message naming PostgreSQL", c.name, code, stderr, c.want)
		}
	}
	if after := listDir(t, dir); after != before {
		t.Errorf("the folder holds %s after the commands; before them %s", after, before)
	}
}

// listDir names everything under dir, one path a line.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, "\n")
}
