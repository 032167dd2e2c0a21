package server

import (
	"context"
	"net/http"
	"time"
)

// requestTimeout gives each request of the API a context that ends after
// d. A handler that runs out of time answers 504 itself, naming what took
// too long; one that returns without answering gets a plain 504. Unlike
// chi's Timeout, an answer the handler wrote is never written over.
func requestTimeout(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			tw := &answerWriter{ResponseWriter: w}
			next.ServeHTTP(tw, r.WithContext(ctx))
			if !tw.answered && ctx.Err() == context.DeadlineExceeded {
				writeError(w, http.StatusGatewayTimeout, "", "the request took longer than the request timeout of "+d.String())
			}
		})
	}
}

// answerWriter notes whether the handler has begun its answer.
type answerWriter struct {
	http.ResponseWriter
	answered bool
}

func (a *answerWriter) WriteHeader(code int) {
	a.answered = true
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerWriter) Write(b []byte) (int, error) {
	a.answered = true
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (a *answerWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }
