package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"github.com/fwlab/fwlab/internal/palette"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/web/templates"
)

//go:embed static
var staticFS embed.FS

// Deps is what the pages need from the rest of the program. The zero value
// is ready to use: it offers the scenario registry's catalogue and presets.
type Deps struct {
	// Scenarios lists the problems offered on the start page; nil means
	// scenarios.All.
	Scenarios func() []*scenarios.Scenario
	// Presets lists the ready-made runs; nil means scenarios.Presets.
	Presets func() []*scenarios.Preset
	// Algorithms is the API's algorithm table (the algorithms of GET
	// /api/scenarios, from the same function), embedded in the start page,
	// which takes every rule of an algorithm row from it; nil embeds an
	// empty table.
	Algorithms func() any
	// DataDir is the server's data directory, shown beside file-path
	// parameters (empty: not shown).
	DataDir string
}

func (d Deps) scenarios() []*scenarios.Scenario {
	if d.Scenarios != nil {
		return d.Scenarios()
	}
	return scenarios.All()
}

func (d Deps) presets() []*scenarios.Preset {
	if d.Presets != nil {
		return d.Presets()
	}
	return scenarios.Presets()
}

// asset is one embedded static file with its content hash.
type asset struct {
	name  string
	data  []byte
	hash  string // first 16 hex digits of the SHA-256 of data
	ctype string
}

// assets indexes the embedded files by their path below static/.
var assets = func() map[string]*asset {
	out := map[string]*asset{}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(p, "static/")
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		out[name] = &asset{name: name, data: b, hash: hex.EncodeToString(sum[:8]), ctype: ct}
		return nil
	})
	if err != nil {
		// The files are compiled in: failing to read them is a build defect.
		panic(fmt.Sprintf("web: reading embedded assets: %v", err))
	}
	return out
}()

// AssetURL returns the URL of an embedded static file with its content hash
// as a version query, so that browsers may cache it for good. An unknown
// name returns the plain path (the request will then get a 404).
func AssetURL(name string) string {
	if a, ok := assets[name]; ok {
		return "/static/" + name + "?v=" + a.hash
	}
	return "/static/" + name
}

// Mount adds the dashboard's pages and static files to r:
// GET / (start page), GET /runs/{id} (a run, live or stored), GET /runs
// (history), GET /compare?runs=a,b (runs overlaid), GET /sweeps (the
// sweeps), GET /sweeps/{id} (a sweep), GET /static/* (assets). The pages read the JSON API.
func Mount(r chi.Router, deps Deps) {
	r.Get("/", func(w http.ResponseWriter, req *http.Request) {
		page := StartPage(deps)
		render(w, req, templates.Start(page))
	})
	r.Get("/runs/{id}", func(w http.ResponseWriter, req *http.Request) {
		id := chi.URLParam(req, "id")
		render(w, req, templates.Run(templates.RunPage{ID: id, Asset: AssetURL}))
	})
	r.Get("/runs", func(w http.ResponseWriter, req *http.Request) {
		render(w, req, templates.History(templates.HistoryPage{Asset: AssetURL}))
	})
	r.Get("/compare", func(w http.ResponseWriter, req *http.Request) {
		render(w, req, templates.Compare(templates.ComparePage{Runs: req.URL.Query().Get("runs"), Asset: AssetURL}))
	})
	r.Get("/sweeps", func(w http.ResponseWriter, req *http.Request) {
		render(w, req, templates.Sweeps(templates.SweepsPage{Asset: AssetURL}))
	})
	r.Get("/sweeps/{id}", func(w http.ResponseWriter, req *http.Request) {
		render(w, req, templates.Sweep(templates.SweepPage{ID: chi.URLParam(req, "id"), Asset: AssetURL}))
	})
	r.Get("/static/*", serveStatic)
	// The series palette shared with the figures (internal/palette).
	r.Get("/palette.json", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(palette.JSON)
	})
}

// render writes a templ component as an HTML page; a rendering failure is a
// 500 with the error's text, never a half-written page.
func render(w http.ResponseWriter, req *http.Request, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(req.Context(), &buf); err != nil {
		http.Error(w, "rendering page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
}

// serveStatic serves an embedded file. A request carrying the file's current
// hash (as AssetURL builds it) may be cached for a year; any other request is
// revalidated through the ETag.
func serveStatic(w http.ResponseWriter, req *http.Request) {
	name := strings.TrimPrefix(chi.URLParam(req, "*"), "/")
	a, ok := assets[name]
	if !ok {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("ETag", `"`+a.hash+`"`)
	if v := req.URL.Query().Get("v"); v == a.hash {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, req, name, time.Time{}, bytes.NewReader(a.data))
}
