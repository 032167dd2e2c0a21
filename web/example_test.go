package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/web"
)

// Mount adds the pages and the embedded assets to a chi router; the JSON API
// and the websocket live beside them (package server mounts both).
func ExampleMount() {
	r := chi.NewRouter()
	web.Mount(r, web.Deps{})
	for _, path := range []string{"/", "/runs/r1", "/static/vendor/uPlot.iife.min.js"} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, rec.Code, strings.SplitN(rec.Header().Get("Content-Type"), ";", 2)[0])
	}
	// Output:
	// / 200 text/html
	// /runs/r1 200 text/html
	// /static/vendor/uPlot.iife.min.js 200 text/javascript
}
