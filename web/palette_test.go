package web

import (
	"bytes"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/palette"
)

// The page's series colours come from the file the figures read: the
// server serves internal/palette's palette.json, and the charts' colour
// constant is read from it.
func TestPaletteIsShared(t *testing.T) {
	r := chi.NewRouter()
	Mount(r, Deps{})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/palette.json", nil))
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), palette.JSON) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /palette.json: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	js, err := os.ReadFile("static/js/format.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "import PALETTE from '/palette.json' with { type: 'json' }") || !strings.Contains(string(js), "export const COLORS = PALETTE.colors;") {
		t.Error("format.js does not take its colours from /palette.json")
	}
}
