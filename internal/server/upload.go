package server

import (
	"bufio"
	"compress/gzip"
	"context"
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
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store"
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
// upload) and removes it on Close. Each file is kept by the SHA-256 of its
// content and charged to the client that sent it first: the bytes of all
// uploads are bounded by quota (-upload-quota), a client's by clientQuota
// (-client-upload-quota). A file goes, and its bytes are given back, when
// the last run naming it is deleted; a file no run has named goes after
// grace (release).
type uploads struct {
	dir         string
	quota       int64 // bytes of every upload stored together
	clientQuota int64 // bytes of one client's uploads
	grace       time.Duration
	// shared, when not nil, is the run store that keeps the uploads for
	// every server sharing its database (pgstore) and counts the quotas
	// there; the files here are then this server's copies of those the
	// store keeps, each going when the store no longer keeps it.
	shared sharedUploads

	mu       sync.Mutex
	made     bool
	used     int64            // bytes stored or being received
	byClient map[string]int64 // the same, by client
	files    map[string]*upFile
}

// sharedUploads is a run store that keeps uploads itself (pgstore.Store):
// PutUpload keeps a file charged to client within the quotas, counted in
// its database across the servers sharing it, failing over a quota with an
// error that has an UploadQuota method (uploadQuotaError); KeptDataFiles
// says which files it still keeps (a file goes with the last run naming it,
// or after the grace when no run named it).
type sharedUploads interface {
	PutUpload(ctx context.Context, b []byte, client string, total, clientQuota int64, grace time.Duration) (string, error)
	KeptDataFiles(ctx context.Context, sums []string) (map[string]bool, error)
	DataFile(ctx context.Context, sum string) ([]byte, error)
}

// uploadQuotaError is the error of a sharedUploads over a quota: the
// client's own (client) or the total; left is what it had left.
type uploadQuotaError interface {
	error
	UploadQuota() (client bool, quota, left int64)
}

// upFile is a stored upload.
type upFile struct {
	client string
	size   int64
	at     time.Time // when it was stored
	named  bool      // a run has named it
}

// quotaError is an upload over a quota: the client's own (client) or the
// server's; left is what the quota had left.
type quotaError struct {
	client bool
	quota  int64
	left   int64
}

func (e *quotaError) Error() string { return "upload quota used up" }

// reserve counts n more bytes of client's against the quotas, failing
// with a *quotaError (and counting nothing) when they do not fit.
func (u *uploads) reserve(client string, n int64) error {
	if u.shared != nil {
		return nil // counted by the store as the file is kept
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byClient == nil {
		u.byClient = map[string]int64{}
	}
	if u.used+n > u.quota {
		return &quotaError{quota: u.quota, left: max(0, u.quota-u.used)}
	}
	if c := u.byClient[client]; c+n > u.clientQuota {
		return &quotaError{client: true, quota: u.clientQuota, left: max(0, u.clientQuota-c)}
	}
	u.used += n
	u.byClient[client] += n
	return nil
}

func (u *uploads) release(client string, n int64) {
	u.mu.Lock()
	u.give(client, n)
	u.mu.Unlock()
}

// give gives n bytes of client's back (u.mu held).
func (u *uploads) give(client string, n int64) {
	if u.shared != nil {
		return
	}
	u.used -= n
	if u.byClient[client] -= n; u.byClient[client] <= 0 {
		delete(u.byClient, client)
	}
}

// quotaWriter writes to w while the quotas have room, counting what it
// wrote in n.
type quotaWriter struct {
	w      io.Writer
	u      *uploads
	client string
	n      int64
}

func (q *quotaWriter) Write(p []byte) (int, error) {
	if err := q.u.reserve(q.client, int64(len(p))); err != nil {
		return 0, err
	}
	n, err := q.w.Write(p)
	q.n += int64(n)
	q.u.release(q.client, int64(len(p)-n))
	return n, err
}

// keep records a stored file (its bytes already counted for client); it
// reports false when the same content was stored before (the new copy's
// bytes are then to be given back, the file staying charged to its first
// client).
func (u *uploads) keep(sum, client string, size int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.files == nil {
		u.files = map[string]*upFile{}
	}
	if f, ok := u.files[sum]; ok {
		if _, err := os.Lstat(filepath.Join(u.dir, sum)); err == nil {
			return false
		}
		// gone from the disk (removed by hand): stored anew
		u.give(f.client, f.size)
	}
	u.files[sum] = &upFile{client: client, size: size, at: time.Now()}
	return true
}

// expire removes the files no run names any more (named by one before, or
// never named and older than the grace), giving their bytes back to their
// clients, and returns them; named reports whether a stored run names an
// upload.
func (u *uploads) expire(named func(sum string) bool) (gone []string) {
	u.mu.Lock()
	var check []string
	for sum := range u.files {
		check = append(check, sum)
	}
	u.mu.Unlock()
	for _, sum := range check {
		isNamed := named(sum)
		u.mu.Lock()
		f := u.files[sum]
		switch {
		case f == nil:
		case isNamed:
			f.named = true
		case f.named || time.Since(f.at) >= u.grace:
			if err := os.Remove(filepath.Join(u.dir, sum)); err == nil || errors.Is(err, os.ErrNotExist) {
				delete(u.files, sum)
				u.give(f.client, f.size)
				gone = append(gone, sum)
			}
		}
		u.mu.Unlock()
	}
	return gone
}

func newUploads(root string, quota, clientQuota int64, grace time.Duration) *uploads {
	// The answered paths are absolute, as the session's confinement wants.
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &uploads{dir: filepath.Join(root, "srv-"+hex.EncodeToString(id[:])), quota: quota, clientQuota: clientQuota, grace: grace}
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
	u.byClient, u.files = nil, nil
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

// overQuota answers 413 for an upload over a quota, naming whose quota
// (the client's or the server's), its flag and how many bytes it has left.
func (s *Server) overQuota(w http.ResponseWriter, qe *quotaError) {
	if qe.client {
		writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("this client's uploads would exceed its quota of %d bytes (%d MiB)%s: %d bytes left; deleting the runs that name its files gives their bytes back",
			qe.quota, qe.quota>>20, s.opts.flag("ClientUploadQuota"), qe.left))
		return
	}
	writeError(w, http.StatusRequestEntityTooLarge, "file", fmt.Sprintf("the server's uploads would exceed their disk quota of %d bytes (%d MiB)%s: %d bytes left",
		qe.quota, qe.quota>>20, s.opts.flag("UploadQuota"), qe.left))
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

// forget drops a file kept by keep that could not be stored.
func (u *uploads) forget(sum string) {
	u.mu.Lock()
	delete(u.files, sum)
	u.mu.Unlock()
}

// uploadsNamed returns the uploads (by hash) that the specs of the runs
// ids name: before they are deleted, so that releaseUploads knows they
// were named.
func (s *Server) uploadsNamed(ctx context.Context, ids []string) map[string]bool {
	named := map[string]bool{}
	for _, id := range ids {
		r, err := s.st.Get(ctx, id)
		if err != nil {
			continue
		}
		for _, v := range r.Spec.Params {
			if h, ok := datapath.UploadHash(strings.TrimSpace(v)); ok && h != "" {
				named[h] = true
			}
		}
	}
	return named
}

// releaseUploads gives back the uploads no stored run names any more (see
// uploads.expire), looking at the runs' specs; wasNamed are uploads that
// runs deleted since named.
func (s *Server) releaseUploads(ctx context.Context, wasNamed map[string]bool) {
	s.uploads.mu.Lock()
	n := len(s.uploads.files)
	for h := range wasNamed {
		if f := s.uploads.files[h]; f != nil {
			f.named = true
		}
	}
	s.uploads.mu.Unlock()
	if n == 0 {
		return
	}
	if s.uploads.shared != nil {
		s.uploads.dropUnkept(ctx)
		return
	}
	named := map[string]bool{}
	for off := 0; ; off += store.MaxLimit {
		runs, total, err := s.st.List(ctx, store.Filter{Offset: off, Limit: store.MaxLimit})
		if err != nil {
			return // nothing is released on a doubt
		}
		for _, r := range runs {
			for _, v := range r.Spec.Params {
				if h, ok := datapath.UploadHash(strings.TrimSpace(v)); ok && h != "" {
					named[h] = true
				}
			}
		}
		if off+store.MaxLimit >= total {
			break
		}
	}
	// their names go with them (a shared store removes those itself)
	if gone := s.uploads.expire(func(sum string) bool { return named[sum] }); len(gone) > 0 {
		if err := s.st.ForgetUploadNames(ctx, gone); err != nil {
			s.log.Warn("forgetting the names of removed uploads", "err", err)
		}
	}
}

// dropUnkept removes this server's copies of the uploads its shared store
// no longer keeps (their last run was deleted, by any server, or no run
// named them within the grace).
func (u *uploads) dropUnkept(ctx context.Context) {
	u.mu.Lock()
	var sums []string
	for sum := range u.files {
		sums = append(sums, sum)
	}
	u.mu.Unlock()
	kept, err := u.shared.KeptDataFiles(ctx, sums)
	if err != nil {
		return // nothing is removed on a doubt
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, sum := range sums {
		if f := u.files[sum]; f != nil && !kept[sum] {
			if err := os.Remove(filepath.Join(u.dir, sum)); err == nil || errors.Is(err, os.ErrNotExist) {
				delete(u.files, sum)
			}
		}
	}
}

// copyShared makes this server's copy of an upload that another server
// sharing the store took (value names it as upload:SHA256), so that a run
// submitted here may name it; it does nothing for any other value, a file
// copied before, or a store that does not keep it (the run's resolution
// then says the upload is unknown).
func (u *uploads) copyShared(ctx context.Context, value string) {
	sum, ok := datapath.UploadHash(strings.TrimSpace(value))
	if u.shared == nil || !ok || sum == "" {
		return
	}
	u.mu.Lock()
	_, have := u.files[sum]
	u.mu.Unlock()
	if have {
		return
	}
	b, err := u.shared.DataFile(ctx, sum)
	if err != nil {
		return
	}
	dir, err := u.ensureDir()
	if err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".copy-")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return
	}
	if !u.keep(sum, "", int64(len(b))) {
		_ = os.Remove(f.Name()) // copied meanwhile
		return
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, sum)); err != nil {
		_ = os.Remove(f.Name())
		u.forget(sum)
	}
}
