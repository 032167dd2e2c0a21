// Package fulldisk gives tests a real file system that fills up: a small
// tmpfs mounted for the test (ARCHITECTURE.md, "internal/fulldisk").
package fulldisk

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Mount mounts a tmpfs of size (mount's size option: "8m") on dir for the
// test, unmounted when the test ends. It needs root: where it cannot mount,
// the test fails when CI is set and is skipped, saying so, otherwise.
func Mount(t testing.TB, dir, size string) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "mounting a small file system needs root"
	} else if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		why = "mount -t tmpfs failed: " + strings.TrimSpace(string(out))
	}
	if why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("full-disk test cannot run: %s", why)
		}
		t.Logf("SKIPPED: the full-disk test did not run: %s", why)
		t.Skip(why)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// Dir returns a new directory of the test's with a tmpfs of size mounted
// on it (Mount).
func Dir(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	Mount(t, dir, size)
	return dir
}
