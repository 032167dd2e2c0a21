package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/queue"
)

// The worker keeps fetched data files in the user's own cache folder by
// default, made 0700; a cache folder another user owns, or that others may
// write, or a link, is refused with the reason, before anything is fetched.
func TestWorkerCacheIsTheUsersOwn(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	def, err := queue.DefaultCacheDir()
	if err != nil || def != filepath.Join(home, "cache", "fwlab", "worker-data") {
		t.Fatalf("default cache %q, %v; want the user's cache folder", def, err)
	}
	if err := queue.PrepareCacheDir(def); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(def); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the default cache: %v, %v; want a folder of mode 0700", fi.Mode(), err)
	}

	shared := filepath.Join(home, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "link")
	if err := os.Symlink(def, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(home, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	otherRule := "belongs to another user"
	if os.Getuid() == 0 {
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		other = "/" // root's: another user's for anyone else
	}
	for dir, rule := range map[string]string{
		shared: "may be written by other users (mode 0777)",
		link:   "is a symbolic link",
		other:  otherRule,
	} {
		var out, errb bytes.Buffer
		code := worker(context.Background(), []string{"-db", "postgres://x@/y", "-cache", dir}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "-cache: ") || !strings.Contains(errb.String(), rule) {
			t.Errorf("-cache %s: exit %d, %q; want 2 and %q", dir, code, errb.String(), rule)
		}
	}
}
