package server

import (
	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/web"
)

// mountPages mounts the dashboard's pages from the web package:
// GET / (start page), GET /runs/{id} (live run page), GET /static/* (assets).
func mountPages(r chi.Router, s *Server) error {
	web.Mount(r, web.Deps{DataDir: s.opts.DataDir, Algorithms: func() any { return algorithms() }})
	return nil
}
