package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
)

// upload POSTs a multipart form: the file under field (when name is not
// empty) and the other fields.
func upload(t testing.TB, ts *httptest.Server, field, name string, data []byte, fields map[string]string) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if name != "" {
		fw, err := mw.CreateFormFile(field, name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", ts.URL+"/api/uploads", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("answer %d is not JSON: %s", resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

func TestUploads(t *testing.T) {
	root := t.TempDir()
	data := t.TempDir()
	srv, ts := newTestServer(t, Options{DataDir: data, UploadDir: root, MaxUpload: 1000})
	goodCSV := []byte("1,2,3\n4,5,6\n")
	goodSVM := []byte("+1 1:0.5 3:2\n-1 2:1\n")
	for _, tc := range []struct {
		name, file string
		data       []byte
		fields     map[string]string
		code       int
		field      string // of the error
		msg        string // in the error
		rows, cols int
		format     string
	}{
		{name: "csv", file: "x.csv", data: goodCSV, fields: map[string]string{"format": "csv"}, code: 201, rows: 2, cols: 3, format: "csv"},
		{name: "csv by extension", file: "X data.csv", data: goodCSV, code: 201, rows: 2, cols: 3, format: "csv"},
		{name: "svmlight", file: "train.svm", data: goodSVM, fields: map[string]string{"format": "svmlight"}, code: 201, rows: 2, cols: 3, format: "svmlight"},
		{name: "malformed csv", file: "bad.csv", data: []byte("1,2\n3,x\n"), fields: map[string]string{"format": "csv"}, code: 400, field: "file", msg: "bad.csv:2:3: "},
		{name: "ragged csv", file: "r.csv", data: []byte("1,2\n3\n"), code: 400, field: "file", msg: "r.csv:2: "},
		{name: "malformed svmlight", file: "bad.svm", data: []byte("+1 1:0.5\n-1 2:oops\n"), fields: map[string]string{"format": "svmlight"}, code: 400, field: "file", msg: "bad.svm:2:"},
		{name: "csv sent as svmlight", file: "x.csv", data: goodCSV, fields: map[string]string{"format": "svmlight"}, code: 400, field: "file", msg: "x.csv:1:"},
		{name: "empty", file: "e.csv", data: nil, code: 400, field: "file", msg: "e.csv: empty file"},
		{name: "oversize", file: "big.csv", data: bytes.Repeat([]byte("1\n"), 501), code: 413, field: "file", msg: "at most 1000 bytes"},
		{name: "unknown format", file: "x.csv", data: goodCSV, fields: map[string]string{"format": "xlsx"}, code: 400, field: "format", msg: "must be csv, svmlight or ocr"},
		{name: "no file", file: "", fields: map[string]string{"format": "csv"}, code: 400, field: "file", msg: "is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := upload(t, ts, "file", tc.file, tc.data, tc.fields)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %v", code, tc.code, out)
			}
			if tc.code != 201 {
				if out["field"] != tc.field || !strings.Contains(out["error"].(string), tc.msg) {
					t.Fatalf("error %v, want field %q and a message with %q", out, tc.field, tc.msg)
				}
				return
			}
			// kept by the SHA-256 of its content, and named by it
			sum := sha256.Sum256(tc.data)
			hash := hex.EncodeToString(sum[:])
			if out["path"] != "upload:"+hash {
				t.Fatalf("path %v, want upload:%s", out["path"], hash)
			}
			path := filepath.Join(srv.uploads.dir, hash)
			b, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(b, tc.data) || !strings.HasPrefix(path, root+string(filepath.Separator)) {
				t.Fatalf("stored file %s: %v (%q)", path, err, b)
			}
			if out["name"] != tc.file || out["bytes"] != float64(len(tc.data)) || out["format"] != tc.format ||
				out["rows"] != float64(tc.rows) || out["cols"] != float64(tc.cols) {
				t.Fatalf("answer %v", out)
			}
		})
	}
	// The field must be called file.
	if code, out := upload(t, ts, "data", "x.csv", goodCSV, nil); code != 400 || out["field"] != "file" {
		t.Fatalf("a file in another field: %d %v", code, out)
	}
	// Not a multipart body at all.
	if code, body := do(t, "POST", ts.URL+"/api/uploads", []byte(`{}`)); code != 400 || !strings.Contains(string(body), `"field":"file"`) {
		t.Fatalf("a JSON body: %d %s", code, body)
	}

	// A run uses an upload by its path, although it lies outside the data
	// directory.
	code, out := upload(t, ts, "file", "d.csv", goodCSV, nil)
	if code != 201 {
		t.Fatalf("upload: %d %v", code, out)
	}
	sp := fakeRun(5, "fw")
	sp.Params["data"] = out["path"].(string)
	path, _ := filepath.EvalSymlinks(filepath.Join(srv.uploads.dir, strings.TrimPrefix(out["path"].(string), "upload:")))
	id := create(t, ts, sp)
	if got := instancePanels(t, ts, id)["data"]; got != path {
		t.Fatalf("the run read %v, want %s", got, path)
	}
	// Its path, and other files beside the upload directory, stay refused.
	sp.Params["data"] = path
	if code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, sp)); code != 400 || !strings.Contains(string(body), "not an absolute path") {
		t.Fatalf("an upload by its path: %d %s", code, body)
	}
	sp.Params["data"] = filepath.Join(root, "elsewhere.csv")
	code, body := do(t, "POST", ts.URL+"/api/runs", mustJSON(t, sp))
	if code != 400 || !strings.Contains(string(body), `"field":"params.data"`) {
		t.Fatalf("a path beside the uploads: %d %s", code, body)
	}

	// Close removes this server's uploads, and nothing else.
	keep := filepath.Join(root, "keep.txt")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFinished(t, srv, id)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the upload survived Close: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("Close removed a file it did not make: %v", err)
	}
}

func TestUploadsWithoutDataDir(t *testing.T) {
	_, ts := newTestServer(t, Options{UploadDir: t.TempDir()})
	code, out := upload(t, ts, "file", "x.csv", []byte("1\n2\n"), nil)
	if code != 201 {
		t.Fatalf("%d %v", code, out)
	}
	sp := fakeRun(5, "fw")
	sp.Params["data"] = out["path"].(string)
	create(t, ts, sp)
}

func TestFinishedTracePanelsOverAPI(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, fakeRun(30, "fw", "afw"))
	waitFinished(t, srv, id)
	st := status(t, ts, id)
	for _, tr := range st.Traces { // the status says has_panels; the panels have their own route
		code, body := do(t, "GET", fmt.Sprintf("%s/api/runs/%s/traces/%d/panels", ts.URL, id, tr.Trace), nil)
		var p map[string]any
		if code != 200 || json.Unmarshal(body, &p) != nil || !tr.HasPanels || tr.Panels != nil {
			t.Fatalf("trace %d: has_panels %v, status panels %v, GET panels %d %s", tr.Trace, tr.HasPanels, tr.Panels, code, body)
		}
		got, ok := p["final"].([]any)
		if !ok || len(got) != 2 || got[0] != 30.0 || got[1] != float64(tr.Seed) {
			t.Fatalf("trace %d: panels %v, want final = [30, %d]", tr.Trace, p, tr.Seed)
		}
	}
	// A run whose panels fail reports why, per trace.
	sp := fakeRun(3, "fw")
	sp.Params["panel_err"] = "cannot draw"
	id = create(t, ts, sp)
	waitFinished(t, srv, id)
	if tr := status(t, ts, id).Traces[0]; tr.Panels != nil || !strings.Contains(tr.PanelsError, "cannot draw") {
		t.Fatalf("panels %v, error %q", tr.Panels, tr.PanelsError)
	}
}

// ocrLine is one letter of the OCR TSV format.
func ocrLine(id int, letter byte, next, word, pos, fold int, pixel string) string {
	f := []string{fmt.Sprint(id), string(letter), fmt.Sprint(next), fmt.Sprint(word), fmt.Sprint(pos), fmt.Sprint(fold)}
	for p := 0; p < 128; p++ {
		f = append(f, pixel)
	}
	return strings.Join(f, "\t") + "\n"
}

func TestUploadOCR(t *testing.T) {
	_, ts := newTestServer(t, Options{UploadDir: t.TempDir()})
	good := ocrLine(1, 'a', 2, 1, 1, 0, "0") + ocrLine(2, 'b', -1, 1, 2, 0, "1") + ocrLine(3, 'c', -1, 2, 1, 3, "0")
	code, out := upload(t, ts, "file", "letters.tsv", []byte(good), map[string]string{"format": "ocr"})
	if code != 201 || out["rows"] != 3.0 || out["cols"] != 2.0 || out["format"] != "ocr" {
		t.Fatalf("a good OCR file: %d %v, want 3 letters in 2 words", code, out)
	}
	bad := ocrLine(1, 'a', -1, 1, 1, 0, "0") + ocrLine(2, 'b', -1, 2, 1, 0, "2")
	code, out = upload(t, ts, "file", "letters.tsv", []byte(bad), nil)
	if code != 400 || out["field"] != "file" || !strings.Contains(out["error"].(string), "letters.tsv:2") {
		t.Fatalf("a malformed OCR file: %d %v, want the file and line 2 named", code, out)
	}
}

// The stream's status messages mark the traces with panels but leave the
// panels themselves to GET /api/runs/{id}/traces/{t}/panels, as GET
// /api/runs/{id} does.
func TestStreamStatusLeavesPanelsOut(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, fakeRun(10, "fw", "afw"))
	waitFinished(t, srv, id)
	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	var last *session.Status
	for m := range ch {
		if m.Type == "hello" || m.Type == "done" || m.Type == "status" {
			run := m.Run
			last = &run
		}
	}
	<-errc
	if last == nil || len(last.Traces) != 2 {
		t.Fatalf("no status over the stream: %+v", last)
	}
	for _, tr := range last.Traces {
		if !tr.HasPanels || tr.Panels != nil {
			t.Fatalf("trace %d over the stream: has_panels %v, panels %v", tr.Trace, tr.HasPanels, tr.Panels)
		}
	}
	for _, tr := range status(t, ts, id).Traces {
		if !tr.HasPanels || tr.Panels != nil {
			t.Fatalf("trace %d over GET: has_panels %v, panels %v", tr.Trace, tr.HasPanels, tr.Panels)
		}
		code, body := do(t, "GET", fmt.Sprintf("%s/api/runs/%s/traces/%d/panels", ts.URL, id, tr.Trace), nil)
		if code != 200 || !strings.HasPrefix(string(body), `{"final":[10,`) {
			t.Fatalf("trace %d's panels: %d %s", tr.Trace, code, body)
		}
	}
}

// FuzzUpload: any file in any format is stored intact (201) or refused with
// a 400 or 413 naming the file or format field; never a 5xx or a panic.
func FuzzUpload(f *testing.F) {
	f.Add([]byte("1,2\n3,4\n"), uint8(0))
	f.Add([]byte("+1 1:2 4:0.5\n"), uint8(1))
	f.Add([]byte("1,x\n"), uint8(0))
	f.Add([]byte{0x1f, 0x8b, 0, 1}, uint8(2))
	f.Add([]byte(""), uint8(3))
	srv, err := New(Options{UploadDir: f.TempDir(), MaxUpload: 2048})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	formats := []string{"csv", "svmlight", "ocr", ""}
	f.Fuzz(func(t *testing.T, data []byte, fi uint8) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		if ft := formats[int(fi)%len(formats)]; ft != "" {
			_ = mw.WriteField("format", ft)
		}
		fw, _ := mw.CreateFormFile("file", "f.dat")
		_, _ = fw.Write(data)
		_ = mw.Close()
		req := httptest.NewRequest("POST", "http://localhost/api/uploads", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%d: not JSON: %s", rec.Code, rec.Body.Bytes())
		}
		switch rec.Code {
		case 201:
			stored := filepath.Join(srv.uploads.dir, strings.TrimPrefix(out["path"].(string), "upload:"))
			b, err := os.ReadFile(stored)
			if err != nil || !bytes.Equal(b, data) {
				t.Fatalf("stored %q (%v), sent %q", b, err, data)
			}
			_ = os.Remove(stored)
		case 400, 413:
			if out["field"] != "file" && out["field"] != "format" || out["error"] == "" {
				t.Fatalf("%d: %v", rec.Code, out)
			}
		default:
			t.Fatalf("status %d: %v", rec.Code, out)
		}
	})
}
