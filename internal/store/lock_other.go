//go:build !unix

package store

import "os"

// lockFile on systems without flock: every process is taken as the owner,
// so a second process opening the file marks the first's live runs
// interrupted.
func lockFile(path string) (*os.File, bool, error) { return nil, true, nil }
