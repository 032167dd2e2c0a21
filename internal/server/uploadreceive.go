package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// uploadResult is the answer to a successful upload.
type uploadResult struct {
	// Path is the value a run spec gives the data-file parameter.
	Path   string `json:"path"`
	Name   string `json:"name"`   // the file's name as sent
	Bytes  int64  `json:"bytes"`  // its size
	Format string `json:"format"` // the format it was checked against
	// Shape of the data: rows and columns (csv), examples and the largest
	// feature index (svmlight), letters and words (ocr).
	Rows int `json:"rows"`
	Cols int `json:"cols"`
}

// handleUpload stores a data file sent as the multipart field "file" (with
// an optional field "format": csv, svmlight or ocr), after checking that it
// parses, and answers 201 with the path a run spec uses for it.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	limit := s.opts.MaxUpload
	// The body may take UploadTimeout, beyond the server's read timeout
	// for other requests (where the connection supports deadlines).
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.UploadTimeout))
	// The body holds the file plus the multipart framing and small fields.
	r.Body = http.MaxBytesReader(w, r.Body, limit+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "file", "send the data file as multipart/form-data with the field \"file\": "+err.Error())
		return
	}
	up := receivedUpload{client: clientAddr(r)}
	// files the deleted runs named, and unused ones past their grace,
	// give their bytes back first
	s.releaseUploads(r.Context(), nil)
	defer func() {
		if up.tmp != "" {
			_ = os.Remove(up.tmp)
			s.uploads.release(up.client, up.size)
		}
	}()
	if !s.readUploadParts(w, mr, &up) {
		return
	}
	if up.format == "" {
		up.format = formatOf(up.name)
	}
	if up.format != FormatCSV && up.format != FormatSVMLight && up.format != FormatOCR {
		writeError(w, http.StatusBadRequest, "format", fmt.Sprintf("must be csv, svmlight or ocr, got %q", up.format))
		return
	}
	shown := filepath.Base(up.name)
	// At most MaxParses uploads are parsed at once; the others wait.
	select {
	case s.parses <- struct{}{}:
	case <-r.Context().Done():
		writeError(w, http.StatusServiceUnavailable, "", "the request ended while waiting to parse the upload")
		return
	}
	rows, cols, err := checkData(up.tmp, shown, up.format, limit)
	<-s.parses
	if err != nil {
		writeError(w, http.StatusBadRequest, "file", err.Error())
		return
	}
	sum, ok := s.keepUpload(w, r, &up, shown)
	if !ok {
		return
	}
	writeJSON(w, http.StatusCreated, uploadResult{Path: datapath.UploadName(sum), Name: shown, Bytes: up.size, Format: up.format, Rows: rows, Cols: cols})
}

// receivedUpload is an upload as its request is read: the fields sent, and
// the temporary file holding the data (removed, its bytes given back to the
// client's count, unless it is kept).
type receivedUpload struct {
	client, format, name, tmp string
	size                      int64
}

// uploadTooLarge answers 413 for a file over -max-upload.
func (s *Server) uploadTooLarge(w http.ResponseWriter) {
	limit := s.opts.MaxUpload
	writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the file must be at most %d bytes (%d MiB)%s", limit, limit>>20, s.opts.flag("MaxUpload")))
}

// readUploadParts reads the multipart fields into up, the file into a
// temporary file; it answers the request and returns false on an error.
func (s *Server) readUploadParts(w http.ResponseWriter, mr *multipart.Reader, up *receivedUpload) bool {
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.uploadTooLarge(w)
				return false
			}
			writeError(w, http.StatusBadRequest, "file", "reading the upload: "+err.Error())
			return false
		}
		switch part.FormName() {
		case "format":
			b, err := io.ReadAll(io.LimitReader(part, 64))
			if err != nil {
				writeError(w, http.StatusBadRequest, "format", "reading the field: "+err.Error())
				return false
			}
			up.format = strings.TrimSpace(string(b))
		case "file":
			if !s.readUploadFile(w, part, up) {
				return false
			}
		default:
			_, _ = io.Copy(io.Discard, part)
		}
		_ = part.Close()
	}
	if up.tmp == "" {
		writeError(w, http.StatusBadRequest, "file", "is required: send the data file in the multipart field \"file\"")
		return false
	}
	return true
}

// readUploadFile reads the multipart field "file" into a temporary file,
// charged to the client; it answers the request and returns false on an
// error.
func (s *Server) readUploadFile(w http.ResponseWriter, part *multipart.Part, up *receivedUpload) bool {
	if up.tmp != "" {
		writeError(w, http.StatusBadRequest, "file", "send one file per upload")
		return false
	}
	up.name = part.FileName()
	if up.name == "" {
		up.name = "data"
	}
	// the name messages will call the file, kept in the store
	var fe *spec.FieldError
	if err := store.CheckUploadName(filepath.Base(up.name)); errors.As(err, &fe) {
		writeError(w, http.StatusBadRequest, "file", "the file's name "+fe.Msg)
		return false
	}
	var code int
	var err error
	up.tmp, up.size, code, err = s.receive(part, s.opts.MaxUpload, up.client)
	var qe *quotaError
	switch {
	case errors.As(err, &qe):
		s.overQuota(w, qe)
	case code == http.StatusRequestEntityTooLarge:
		s.uploadTooLarge(w)
	case err != nil:
		writeError(w, code, "file", err.Error())
	default:
		return true
	}
	return false
}

// keepUpload keeps the checked file by the SHA-256 of its content, the name
// a spec gives it (upload:SHA256; the same content sent again is one file),
// in the shared store too where there is one, and records the name it was
// sent as. It answers the request and returns false on an error.
func (s *Server) keepUpload(w http.ResponseWriter, r *http.Request, up *receivedUpload, shown string) (string, bool) {
	sum, err := hashFile(up.tmp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "storing the upload: "+err.Error())
		return "", false
	}
	if sh := s.uploads.shared; sh != nil {
		// kept in the store, charged to the client there
		b, err := os.ReadFile(up.tmp)
		if err == nil {
			_, err = sh.PutUpload(r.Context(), b, up.client, s.opts.UploadQuota, s.opts.ClientUploadQuota, s.opts.UploadGrace)
		}
		var qe uploadQuotaError
		if errors.As(err, &qe) {
			isClient, quota, left := qe.UploadQuota()
			s.overQuota(w, &quotaError{client: isClient, quota: quota, left: left})
			return "", false
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, "", "storing the upload: "+err.Error())
			return "", false
		}
	}
	final := filepath.Join(filepath.Dir(up.tmp), sum)
	if !s.uploads.keep(sum, up.client, up.size) {
		// already here: the new copy goes, its bytes are not counted twice
	} else if err := os.Rename(up.tmp, final); err != nil {
		s.uploads.forget(sum)
		writeError(w, http.StatusInternalServerError, "", "storing the upload: "+err.Error())
		return "", false
	} else {
		up.tmp = ""
	}
	// messages about the file name it as sent, on every server sharing
	// the store
	if err := s.st.SetUploadName(r.Context(), sum, shown); err != nil {
		writeError(w, http.StatusInternalServerError, "", "storing the upload's name: "+err.Error())
		return "", false
	}
	return sum, true
}

// hashFile is the SHA-256 of a file's content, in hexadecimal.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// receive copies a file part into the upload directory, at most limit
// bytes; it returns the temporary file, its size and, on failure, the status
// code to answer.
func (s *Server) receive(part *multipart.Part, limit int64, client string) (string, int64, int, error) {
	dir, err := s.uploads.ensureDir()
	if err != nil {
		return "", 0, http.StatusInternalServerError, err
	}
	f, err := os.CreateTemp(dir, ".part-")
	if err != nil {
		return "", 0, http.StatusInternalServerError, fmt.Errorf("storing the upload: %w", err)
	}
	qw := &quotaWriter{w: f, u: s.uploads, client: client}
	n, err := io.Copy(qw, io.LimitReader(part, limit+1))
	cerr := f.Close()
	fail := func(code int, err error) (string, int64, int, error) {
		_ = os.Remove(f.Name())
		s.uploads.release(client, qw.n)
		return "", 0, code, err
	}
	var qe *quotaError
	if errors.As(err, &qe) {
		return fail(http.StatusRequestEntityTooLarge, err)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fail(http.StatusRequestEntityTooLarge, err)
		}
		return fail(http.StatusBadRequest, fmt.Errorf("reading the upload: %w", err))
	}
	if n > limit {
		return fail(http.StatusRequestEntityTooLarge, errors.New("too large"))
	}
	if cerr != nil {
		return fail(http.StatusInternalServerError, fmt.Errorf("storing the upload: %w", cerr))
	}
	return f.Name(), n, 0, nil
}
