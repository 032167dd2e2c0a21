package server

import (
	"fmt"
	"io"
	"net/http"
)

// uploadQuotaError is the error of a sharedUploads over a quota: the
// client's own (client) or the total; left is what it had left.
type uploadQuotaError interface {
	error
	UploadQuota() (client bool, quota, left int64)
}

// quotaError is an upload over a quota: the client's own (client) or the
// server's; left is what the quota had left.
type quotaError struct {
	client bool
	quota  int64
	left   int64
}

func (e *quotaError) Error() string { return "upload quota used up" }

// reserve counts n more bytes of client's against the quotas, failing
// with a *quotaError (and counting nothing) when they do not fit.
func (u *uploads) reserve(client string, n int64) error {
	if u.shared != nil {
		return nil // counted by the store as the file is kept
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byClient == nil {
		u.byClient = map[string]int64{}
	}
	if u.used+n > u.quota {
		return &quotaError{quota: u.quota, left: max(0, u.quota-u.used)}
	}
	if c := u.byClient[client]; c+n > u.clientQuota {
		return &quotaError{client: true, quota: u.clientQuota, left: max(0, u.clientQuota-c)}
	}
	u.used += n
	u.byClient[client] += n
	return nil
}

func (u *uploads) release(client string, n int64) {
	u.mu.Lock()
	u.give(client, n)
	u.mu.Unlock()
}

// give gives n bytes of client's back (u.mu held).
func (u *uploads) give(client string, n int64) {
	if u.shared != nil {
		return
	}
	u.used -= n
	if u.byClient[client] -= n; u.byClient[client] <= 0 {
		delete(u.byClient, client)
	}
}

// quotaWriter writes to w while the quotas have room, counting what it
// wrote in n.
type quotaWriter struct {
	w      io.Writer
	u      *uploads
	client string
	n      int64
}

func (q *quotaWriter) Write(p []byte) (int, error) {
	if err := q.u.reserve(q.client, int64(len(p))); err != nil {
		return 0, err
	}
	n, err := q.w.Write(p)
	q.n += int64(n)
	q.u.release(q.client, int64(len(p)-n))
	return n, err
}

// overQuota answers 413 for an upload over a quota, naming whose quota
// (the client's or the server's), its flag and how many bytes it has left.
func (s *Server) overQuota(w http.ResponseWriter, qe *quotaError) {
	if qe.client {
		writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("this client's uploads would exceed its quota of %d bytes (%d MiB)%s: %d bytes left; deleting the runs that name its files gives their bytes back",
			qe.quota, qe.quota>>20, s.opts.flag("ClientUploadQuota"), qe.left))
		return
	}
	writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the server's uploads would exceed their disk quota of %d bytes (%d MiB)%s: %d bytes left",
		qe.quota, qe.quota>>20, s.opts.flag("UploadQuota"), qe.left))
}
