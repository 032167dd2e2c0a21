package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/store"
)

// DefaultMaxUpload bounds the size of an uploaded data file.
const DefaultMaxUpload = 64 << 20

// uploads stores the uploaded files of one server in a directory of its own
// below the upload root (named when the server is made, made on the first
// upload) and removes it on Close. Each file is kept by the SHA-256 of its
// content and charged to the client that sent it first: the bytes of all
// uploads are bounded by quota (-upload-quota), a client's by clientQuota
// (-client-upload-quota). A file goes, and its bytes are given back, when
// the last run naming it is deleted; a file no run has named goes after
// grace (release).
type uploads struct {
	dir         string
	quota       int64 // bytes of every upload stored together
	clientQuota int64 // bytes of one client's uploads
	grace       time.Duration
	// shared, when not nil, is the run store that keeps the uploads for
	// every server sharing its database (pgstore) and counts the quotas
	// there; the files here are then this server's copies of those the
	// store keeps, each going when the store no longer keeps it.
	shared sharedUploads

	mu       sync.Mutex
	made     bool
	used     int64            // bytes stored or being received
	byClient map[string]int64 // the same, by client
	files    map[string]*upFile
}

// sharedUploads is a run store that keeps uploads itself (pgstore.Store):
// PutUpload keeps a file charged to client within the quotas, counted in
// its database across the servers sharing it, failing over a quota with an
// error that has an UploadQuota method (uploadQuotaError); KeptDataFiles
// says which files it still keeps (a file goes with the last run naming it,
// or after the grace when no run named it).
type sharedUploads interface {
	PutUpload(ctx context.Context, b []byte, client string, total, clientQuota int64, grace time.Duration) (string, error)
	KeptDataFiles(ctx context.Context, sums []string) (map[string]bool, error)
	DataFile(ctx context.Context, sum string) ([]byte, error)
}

// upFile is a stored upload.
type upFile struct {
	client string
	size   int64
	at     time.Time // when it was stored
	named  bool      // a run has named it
}

// keep records a stored file (its bytes already counted for client); it
// reports false when the same content was stored before (the new copy's
// bytes are then to be given back, the file staying charged to its first
// client).
func (u *uploads) keep(sum, client string, size int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.files == nil {
		u.files = map[string]*upFile{}
	}
	if f, ok := u.files[sum]; ok {
		if _, err := os.Lstat(filepath.Join(u.dir, sum)); err == nil {
			return false
		}
		// gone from the disk (removed by hand): stored anew
		u.give(f.client, f.size)
	}
	u.files[sum] = &upFile{client: client, size: size, at: time.Now()}
	return true
}

// expire removes the files no run names any more (named by one before, or
// never named and older than the grace), giving their bytes back to their
// clients, and returns them; named reports whether a stored run names an
// upload.
func (u *uploads) expire(named func(sum string) bool) (gone []string) {
	u.mu.Lock()
	var check []string
	for sum := range u.files {
		check = append(check, sum)
	}
	u.mu.Unlock()
	for _, sum := range check {
		isNamed := named(sum)
		u.mu.Lock()
		f := u.files[sum]
		switch {
		case f == nil:
		case isNamed:
			f.named = true
		case f.named || time.Since(f.at) >= u.grace:
			if err := os.Remove(filepath.Join(u.dir, sum)); err == nil || errors.Is(err, os.ErrNotExist) {
				delete(u.files, sum)
				u.give(f.client, f.size)
				gone = append(gone, sum)
			}
		}
		u.mu.Unlock()
	}
	return gone
}

func newUploads(root string, quota, clientQuota int64, grace time.Duration) *uploads {
	// The answered paths are absolute, as the session's confinement wants.
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &uploads{dir: filepath.Join(root, "srv-"+hex.EncodeToString(id[:])), quota: quota, clientQuota: clientQuota, grace: grace}
}

func (u *uploads) ensureDir() (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.made {
		return u.dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(u.dir), 0o700); err != nil {
		return "", fmt.Errorf("making the upload directory: %w", err)
	}
	// Mkdir, not MkdirAll: the directory must be new, or it is not ours.
	if err := os.Mkdir(u.dir, 0o700); err != nil {
		return "", fmt.Errorf("making the upload directory: %w", err)
	}
	u.made = true
	return u.dir, nil
}

// remove deletes this server's upload directory (only the files uploaded to
// this server live there).
func (u *uploads) remove() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.made {
		return nil
	}
	u.made = false
	u.used = 0
	u.byClient, u.files = nil, nil
	return os.RemoveAll(u.dir)
}

// forget drops a file kept by keep that could not be stored.
func (u *uploads) forget(sum string) {
	u.mu.Lock()
	delete(u.files, sum)
	u.mu.Unlock()
}

// uploadsNamed returns the uploads (by hash) that the specs of the runs
// ids name: before they are deleted, so that releaseUploads knows they
// were named.
func (s *Server) uploadsNamed(ctx context.Context, ids []string) map[string]bool {
	named := map[string]bool{}
	for _, id := range ids {
		r, err := s.st.Get(ctx, id)
		if err != nil {
			continue
		}
		for _, v := range r.Spec.Params {
			if h, ok := datapath.UploadHash(strings.TrimSpace(v)); ok && h != "" {
				named[h] = true
			}
		}
	}
	return named
}

// releaseUploads gives back the uploads no stored run names any more (see
// uploads.expire), looking at the runs' specs; wasNamed are uploads that
// runs deleted since named.
func (s *Server) releaseUploads(ctx context.Context, wasNamed map[string]bool) {
	s.uploads.mu.Lock()
	n := len(s.uploads.files)
	for h := range wasNamed {
		if f := s.uploads.files[h]; f != nil {
			f.named = true
		}
	}
	s.uploads.mu.Unlock()
	if n == 0 {
		return
	}
	if s.uploads.shared != nil {
		s.uploads.dropUnkept(ctx)
		return
	}
	named := map[string]bool{}
	for off := 0; ; off += store.MaxLimit {
		runs, total, err := s.st.List(ctx, store.Filter{Offset: off, Limit: store.MaxLimit})
		if err != nil {
			return // nothing is released on a doubt
		}
		for _, r := range runs {
			for _, v := range r.Spec.Params {
				if h, ok := datapath.UploadHash(strings.TrimSpace(v)); ok && h != "" {
					named[h] = true
				}
			}
		}
		if off+store.MaxLimit >= total {
			break
		}
	}
	// their names go with them (a shared store removes those itself)
	if gone := s.uploads.expire(func(sum string) bool { return named[sum] }); len(gone) > 0 {
		if err := s.st.ForgetUploadNames(ctx, gone); err != nil {
			s.log.Warn("forgetting the names of removed uploads", "err", err)
		}
	}
}

// dropUnkept removes this server's copies of the uploads its shared store
// no longer keeps (their last run was deleted, by any server, or no run
// named them within the grace).
func (u *uploads) dropUnkept(ctx context.Context) {
	u.mu.Lock()
	var sums []string
	for sum := range u.files {
		sums = append(sums, sum)
	}
	u.mu.Unlock()
	kept, err := u.shared.KeptDataFiles(ctx, sums)
	if err != nil {
		return // nothing is removed on a doubt
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, sum := range sums {
		if f := u.files[sum]; f != nil && !kept[sum] {
			if err := os.Remove(filepath.Join(u.dir, sum)); err == nil || errors.Is(err, os.ErrNotExist) {
				delete(u.files, sum)
			}
		}
	}
}

// copyShared makes this server's copy of an upload that another server
// sharing the store took (value names it as upload:SHA256), so that a run
// submitted here may name it; it does nothing for any other value, a file
// copied before, or a store that does not keep it (the run's resolution
// then says the upload is unknown).
func (u *uploads) copyShared(ctx context.Context, value string) {
	sum, ok := datapath.UploadHash(strings.TrimSpace(value))
	if u.shared == nil || !ok || sum == "" {
		return
	}
	u.mu.Lock()
	_, have := u.files[sum]
	u.mu.Unlock()
	if have {
		return
	}
	b, err := u.shared.DataFile(ctx, sum)
	if err != nil {
		return
	}
	dir, err := u.ensureDir()
	if err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".copy-")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return
	}
	if !u.keep(sum, "", int64(len(b))) {
		_ = os.Remove(f.Name()) // copied meanwhile
		return
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, sum)); err != nil {
		_ = os.Remove(f.Name())
		u.forget(sum)
	}
}
