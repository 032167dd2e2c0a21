package server

import (
	"bufio"
	"compress/gzip"
	"crypto/rand"
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
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// DefaultMaxUpload bounds the size of an uploaded data file.
const DefaultMaxUpload = 64 << 20

// Upload formats: the form field "format" names one; without it the file's
// extension decides (.csv → csv, .gz/.tsv → ocr, anything else svmlight).
const (
	FormatCSV      = "csv"      // plain comma-separated numbers (x and y of the models, GFLASSO's X and Y)
	FormatSVMLight = "svmlight" // svmlight/LIBSVM (the data of logistic and svm-dual)
	FormatOCR      = "ocr"      // the OCR letters TSV, optionally gzip-compressed (ssvm-ocr's data)
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

// uploads stores the uploaded files of one server in a directory of its own
// below the upload root (named when the server is made, made on the first
// upload) and removes it on Close.
type uploads struct {
	dir   string
	quota int64 // bytes of every upload stored together

	mu   sync.Mutex
	made bool
	used int64 // bytes stored or being received
}

// reserve counts n more bytes against the quota, reporting false (and
// counting nothing) when they do not fit.
func (u *uploads) reserve(n int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.used+n > u.quota {
		return false
	}
	u.used += n
	return true
}

func (u *uploads) release(n int64) {
	u.mu.Lock()
	u.used -= n
	u.mu.Unlock()
}

// errQuota is the error of a write beyond the upload quota.
var errQuota = errors.New("upload quota used up")

// quotaWriter writes to w while the uploads' quota has room, counting what
// it wrote in n.
type quotaWriter struct {
	w io.Writer
	u *uploads
	n int64
}

func (q *quotaWriter) Write(p []byte) (int, error) {
	if !q.u.reserve(int64(len(p))) {
		return 0, errQuota
	}
	n, err := q.w.Write(p)
	q.n += int64(n)
	q.u.release(int64(len(p) - n))
	return n, err
}

func newUploads(root string, quota int64) *uploads {
	// The answered paths are absolute, as the session's confinement wants.
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &uploads{dir: filepath.Join(root, "srv-"+hex.EncodeToString(id[:])), quota: quota}
}

func (u *uploads) ensureDir() (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.made {
		return u.dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(u.dir), 0o700); err != nil {
		return "", fmt.Errorf("making the upload directory: %w", err)
	}
	// Mkdir, not MkdirAll: the directory must be new, or it is not ours.
	if err := os.Mkdir(u.dir, 0o700); err != nil {
		return "", fmt.Errorf("making the upload directory: %w", err)
	}
	u.made = true
	return u.dir, nil
}

// remove deletes this server's upload directory (only the files uploaded to
// this server live there).
func (u *uploads) remove() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.made {
		return nil
	}
	u.made = false
	u.used = 0
	return os.RemoveAll(u.dir)
}

func formatOf(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv":
		return FormatCSV
	case ".gz", ".tsv":
		return FormatOCR
	}
	return FormatSVMLight
}

// checkData parses the file in the given format; the error names the file
// (as the user called it), the line and the column. A gzip-compressed OCR
// file may inflate to at most limit bytes.
func checkData(path, name, format string, limit int64) (rows, cols int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	switch format {
	case FormatCSV:
		m, err := dataio.ParseCSV(f, name)
		if err != nil {
			return 0, 0, err
		}
		rows, cols = m.Dims()
		return rows, cols, nil
	case FormatSVMLight:
		s, err := dataio.ParseSVMLight(f, name)
		if err != nil {
			return 0, 0, err
		}
		// The models that read svmlight data hold it dense: a file they
		// cannot hold is refused now, not by every run on it later.
		if int64(s.Rows())*int64(max(s.Dim, 1)) > scenarios.MaxDenseEntries {
			return 0, 0, fmt.Errorf("%s: %d examples × %d features (its largest feature index) exceed the %d entries the dense models (logistic, svm-dual) hold",
				name, s.Rows(), s.Dim, scenarios.MaxDenseEntries)
		}
		return s.Rows(), s.Dim, nil
	case FormatOCR:
		// A compressed file is inflated once without keeping anything, to
		// refuse one that inflates beyond the limit before parsing it.
		br := bufio.NewReader(f)
		if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(br)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %w", name, err)
			}
			n, err := io.Copy(io.Discard, io.LimitReader(zr, limit+1))
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %w", name, err)
			}
			if n > limit {
				return 0, 0, fmt.Errorf("%s: the decompressed data exceed %d bytes (the upload limit)", name, limit)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return 0, 0, err
			}
			br.Reset(f)
		}
		r := io.Reader(br)
		c, err := ssvm.ReadOCR(r, name)
		if err != nil {
			return 0, 0, err
		}
		return c.Data.Letters(), len(c.Data.Words), nil
	}
	return 0, 0, fmt.Errorf("unknown format %q", format)
}

// handleUpload stores a data file sent as the multipart field "file" (with
// an optional field "format": csv, svmlight or ocr), after checking that it
// parses, and answers 201 with the path a run spec uses for it.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	limit := s.opts.MaxUpload
	tooLarge := func() {
		writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the file must be at most %d bytes (%d MiB)%s", limit, limit>>20, s.opts.flag("MaxUpload")))
	}
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
	var (
		format, name, tmp string
		size              int64
	)
	defer func() {
		if tmp != "" {
			_ = os.Remove(tmp)
			s.uploads.release(size)
		}
	}()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				tooLarge()
				return
			}
			writeError(w, http.StatusBadRequest, "file", "reading the upload: "+err.Error())
			return
		}
		switch part.FormName() {
		case "format":
			b, err := io.ReadAll(io.LimitReader(part, 64))
			if err != nil {
				writeError(w, http.StatusBadRequest, "format", "reading the field: "+err.Error())
				return
			}
			format = strings.TrimSpace(string(b))
		case "file":
			if tmp != "" {
				writeError(w, http.StatusBadRequest, "file", "send one file per upload")
				return
			}
			name = part.FileName()
			if name == "" {
				name = "data"
			}
			var code int
			tmp, size, code, err = s.receive(part, limit)
			if errors.Is(err, errQuota) {
				writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the server's uploads would exceed their disk quota of %d bytes (%d MiB)%s", s.opts.UploadQuota, s.opts.UploadQuota>>20, s.opts.flag("UploadQuota")))
				return
			}
			if code == http.StatusRequestEntityTooLarge {
				tooLarge()
				return
			}
			if err != nil {
				writeError(w, code, "file", err.Error())
				return
			}
		default:
			_, _ = io.Copy(io.Discard, part)
		}
		_ = part.Close()
	}
	if tmp == "" {
		writeError(w, http.StatusBadRequest, "file", "is required: send the data file in the multipart field \"file\"")
		return
	}
	if format == "" {
		format = formatOf(name)
	}
	if format != FormatCSV && format != FormatSVMLight && format != FormatOCR {
		writeError(w, http.StatusBadRequest, "format", fmt.Sprintf("must be csv, svmlight or ocr, got %q", format))
		return
	}
	shown := filepath.Base(name)
	// At most MaxParses uploads are parsed at once; the others wait.
	select {
	case s.parses <- struct{}{}:
	case <-r.Context().Done():
		writeError(w, http.StatusServiceUnavailable, "", "the request ended while waiting to parse the upload")
		return
	}
	rows, cols, err := checkData(tmp, shown, format, limit)
	<-s.parses
	if err != nil {
		writeError(w, http.StatusBadRequest, "file", err.Error())
		return
	}
	// The file is kept by the SHA-256 of its content, the name a spec
	// gives it (upload:SHA256); the same content sent again is one file.
	sum, err := hashFile(tmp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "storing the upload: "+err.Error())
		return
	}
	final := filepath.Join(filepath.Dir(tmp), sum)
	if _, err := os.Lstat(final); err == nil {
		// already here: the new copy goes, its bytes are not counted twice
	} else if err := os.Rename(tmp, final); err != nil {
		writeError(w, http.StatusInternalServerError, "", "storing the upload: "+err.Error())
		return
	} else {
		tmp = ""
	}
	writeJSON(w, http.StatusCreated, uploadResult{Path: datapath.UploadName(sum), Name: shown, Bytes: size, Format: format, Rows: rows, Cols: cols})
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
func (s *Server) receive(part *multipart.Part, limit int64) (string, int64, int, error) {
	dir, err := s.uploads.ensureDir()
	if err != nil {
		return "", 0, http.StatusInternalServerError, err
	}
	f, err := os.CreateTemp(dir, ".part-")
	if err != nil {
		return "", 0, http.StatusInternalServerError, fmt.Errorf("storing the upload: %w", err)
	}
	qw := &quotaWriter{w: f, u: s.uploads}
	n, err := io.Copy(qw, io.LimitReader(part, limit+1))
	cerr := f.Close()
	fail := func(code int, err error) (string, int64, int, error) {
		_ = os.Remove(f.Name())
		s.uploads.release(qw.n)
		return "", 0, code, err
	}
	if errors.Is(err, errQuota) {
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
