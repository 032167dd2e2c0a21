package server

import (
	"bytes"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The request timeout answers 504 for a handler that ran out of time
// without answering, and never writes over an answer the handler gave.
func TestRequestTimeout(t *testing.T) {
	cases := []struct {
		name     string
		handler  http.HandlerFunc
		code     int
		wantBody string
	}{
		{"silent past the deadline", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, 504, "request timeout of 50ms"},
		{"answers its own 504", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			writeError(w, http.StatusGatewayTimeout, "", "the build took too long")
		}, 504, "the build took too long"},
		{"answers in time", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]int{"n": 1}) }, 200, `"n":1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logged bytes.Buffer
			ts := httptest.NewUnstartedServer(requestTimeout(50 * time.Millisecond)(c.handler))
			ts.Config.ErrorLog = log.New(&logged, "", 0)
			ts.Start()
			defer ts.Close()
			code, body := do(t, "GET", ts.URL, nil)
			if code != c.code || !strings.Contains(string(body), c.wantBody) || strings.Count(string(body), "{") != 1 {
				t.Errorf("%d %s; want %d with %q, one answer", code, body, c.code, c.wantBody)
			}
			ts.Close()
			if logged.Len() > 0 {
				t.Errorf("the server logged: %s", logged.String())
			}
		})
	}
}
