package queue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// DefaultCacheDir is the worker's data cache by default: fwlab/worker-data
// in the user's own cache folder (os.UserCacheDir: $XDG_CACHE_HOME or
// ~/.cache on Linux), never a folder every user of the machine shares.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for this user (%v): give one with -cache DIR", err)
	}
	return filepath.Join(base, "fwlab", "worker-data"), nil
}

// PrepareCacheDir makes the data cache dir (and its missing parents) with
// mode 0700 and checks that this user alone may write it: a directory (not
// a link), owned by this user, writable by neither its group nor others.
// A cache another user can write could hand a run other bytes under a
// hash it trusts; the error says which rule the folder breaks.
func PrepareCacheDir(dir string) error {
	if dir == "" {
		return errors.New("no cache folder given")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the cache folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("the cache folder %s is a symbolic link: give the folder itself", dir)
	case !fi.IsDir():
		return fmt.Errorf("the cache folder %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("the cache folder %s belongs to another user (uid %d, this worker runs as uid %d): that user could change the files runs read; use a folder of your own", dir, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("the cache folder %s may be written by other users (mode %04o): another user could change the files runs read; make it private (chmod 700) or use another", dir, perm)
	}
	return nil
}
