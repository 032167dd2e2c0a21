package server

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountPages mounts the dashboard's pages (GET /, GET /runs/{id},
// GET /static/*). Until the web package's pages are wired in, the start page
// points to the API.
func mountPages(r chi.Router, s *Server) error {
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("fwlab dashboard: the pages are not available in this build; the API is at /api/scenarios and /api/runs\n"))
	})
	return nil
}
