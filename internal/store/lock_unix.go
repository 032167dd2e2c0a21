//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile opens (creating) the lock file at path and tries to take an
// exclusive advisory lock on it without waiting. owner reports whether the
// lock was taken; the lock lasts until the file is closed or the process
// ends, however it ends.
func lockFile(path string) (f *os.File, owner bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return f, true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return f, false, nil
	default:
		f.Close()
		return nil, false, fmt.Errorf("lock file %s: %w", path, err)
	}
}
