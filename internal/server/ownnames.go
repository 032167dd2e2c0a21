package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/session"
)

// ownNames rewrites a message about uploaded files to name each by the
// name it was uploaded with, as the store keeps it for every server
// sharing it (datapath.OwnNames): this server's path of the file, another
// server's or a worker's copy, the spec's upload:SHA256 and the hash, whole
// or cut, all become the user's file name. A message that quotes no hash
// costs no look-up; one the store cannot answer is left as it is.
func (s *Server) ownNames(ctx context.Context, msg string) string {
	keys := datapath.UploadKeys(msg)
	if len(keys) == 0 {
		return msg
	}
	names, err := s.st.UploadNames(ctx, keys)
	if err != nil {
		s.log.Warn("reading the names of uploads", "err", err)
		return msg
	}
	return datapath.OwnNames(msg, names, s.uploads.dir)
}

// served is a run's status as the server serves it (the run's API status
// and its page's stream): its worker, and its message naming uploaded
// files by the user's names (a worker that could not make the run names
// its own copies).
func (s *Server) served(ctx context.Context, st session.Status) session.Status {
	st.Message = s.ownNames(ctx, st.Message)
	return s.withWorker(ctx, st)
}

// ownNamesWriter holds an error answer back to rewrite it with
// Server.ownNames; other answers go through untouched.
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
			if msg := s.ownNames(r.Context(), e.Error); msg != e.Error {
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
