package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/session"
)

// remember records the name a stored upload was sent with (the last one,
// when the same content came under several), so that messages about it
// name the user's file.
func (u *uploads) remember(sum, name string) {
	u.mu.Lock()
	if f := u.files[sum]; f != nil {
		f.name = name
	}
	u.mu.Unlock()
}

// ownNames rewrites a message about uploaded files to name each by the
// name it was uploaded with: the file's path on this server (as stored and
// with its links resolved), the spec's upload:SHA256 (whole or quoted as
// errors quote it), a path with the hash as a folder (a worker's copy,
// <cache>/SHA256/<file>) and the bare hash or its first 12 digits all
// become the user's file name.
func (u *uploads) ownNames(msg string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.files) == 0 {
		return msg
	}
	real, err := filepath.EvalSymlinks(u.dir)
	if err != nil {
		real = u.dir
	}
	for sum, f := range u.files {
		if f.name == "" || !strings.Contains(msg, sum[:12]) {
			continue
		}
		up := datapath.UploadName(sum)
		msg = regexp.MustCompile(`[^\s"'`+"`"+`]*/`+sum+`/[A-Za-z0-9._-]+`).ReplaceAllLiteralString(msg, f.name)
		msg = strings.NewReplacer(
			datapath.Quote(up), strconv.Quote(f.name),
			filepath.Join(real, sum), f.name,
			filepath.Join(u.dir, sum), f.name,
			up, f.name,
			sum, f.name,
			sum[:12]+"…", f.name,
			sum[:12], f.name,
		).Replace(msg)
	}
	return msg
}

// served is a run's status as the server serves it (the run's API status
// and its page's stream): its worker, and its message naming uploaded
// files by the user's names (a worker that could not make the run names
// its own copies).
func (s *Server) served(ctx context.Context, st session.Status) session.Status {
	st.Message = s.uploads.ownNames(st.Message)
	return s.withWorker(ctx, st)
}

// ownNamesWriter holds an error answer back to rewrite it with
// uploads.ownNames; other answers go through untouched.
type ownNamesWriter struct {
	http.ResponseWriter
	code int
	buf  bytes.Buffer
}

func (o *ownNamesWriter) WriteHeader(code int) {
	if code >= 400 {
		o.code = code
		return
	}
	o.ResponseWriter.WriteHeader(code)
}

func (o *ownNamesWriter) Write(b []byte) (int, error) {
	if o.code != 0 {
		return o.buf.Write(b)
	}
	return o.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection's writer.
func (o *ownNamesWriter) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// ownNamesMiddleware makes the errors of the requests that read uploaded
// files (a run's start, a preview, a sweep's cells) name each file as the
// user called it, never by the server's path or its hash.
func (s *Server) ownNamesMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ow := &ownNamesWriter{ResponseWriter: w}
		next.ServeHTTP(ow, r)
		if ow.code == 0 {
			return
		}
		body := ow.buf.Bytes()
		var e apiError
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			if msg := s.uploads.ownNames(e.Error); msg != e.Error {
				e.Error = msg
				if b, err := json.Marshal(e); err == nil {
					body = append(b, '\n')
				}
			}
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(ow.code)
		_, _ = w.Write(body)
	})
}
