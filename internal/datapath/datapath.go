// Package datapath is the one rule by which a data file that a spec names
// is found, wherever the spec is run: a server's sessions, a worker, a
// re-run by `dashboard verify`, a cell of `dashboard solve -sweep`. Only
// `dashboard solve` given a path on its own command line reads any file
// its user names (ARCHITECTURE.md, "Invariants"); a spec read from a store, a bundle or a
// sweep document is confined here.
//
// A spec names a data file in one of two ways:
//
//   - "upload:SHA256", an uploaded file, by the SHA-256 of its content
//     (64 lowercase hexadecimal digits), found in the uploads folder;
//   - a relative path, read inside the data folder (a server's or worker's
//     -data DIR, verify's -data DIR).
//
// An absolute path, or a relative one that climbs out of its folder
// ("../x", "a/../../x"), is refused before anything is opened. Symbolic
// links are resolved and the file they lead to must still lie inside the
// folder. The file is opened without blocking (a FIFO cannot hang the
// reader) and checked with fstat: a regular file of at most the size
// limit. Errors name the field and the rule and quote at most 40
// characters of the value, never a byte of a file's content.
package datapath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// UploadPrefix starts the value that names an upload by its content's hash.
const UploadPrefix = "upload:"

// DefaultMaxFile bounds a data file when Folders.MaxFile is 0.
const DefaultMaxFile = 256 << 20

// Folders are the folders data files may be read from.
type Folders struct {
	// Data is the data folder: a relative path is read inside it. "" for
	// none: then only uploads may be named.
	Data string
	// Uploads holds the uploaded files, each named by its SHA-256. "" for
	// none.
	Uploads string
	// MaxFile bounds a file's size (DefaultMaxFile when 0).
	MaxFile int64
	// DataFlag names the flag that sets Data, for errors ("-data DIR").
	DataFlag string
}

// errorf is a refused value: a *spec.FieldError naming the field and the
// rule.
func errorf(field, format string, a ...any) error { return spec.Errorf(field, format, a...) }

// Quote quotes at most 40 characters of s, escaped as a Go string, with an
// ellipsis when s is longer: what an error may show of a user's value.
func Quote(s string) string {
	const max = 40
	r := []rune(s)
	if len(r) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(string(r[:max])) + "…"
}

// UploadName returns the value a spec gives for an upload whose content
// has the SHA-256 sum (lowercase hexadecimal).
func UploadName(sum string) string { return UploadPrefix + sum }

// UploadHash returns the hash an upload value names, and whether value
// names an upload at all (a value that starts with the prefix but holds no
// valid hash reports true with ""), so it is never taken for a path.
func UploadHash(value string) (string, bool) {
	h, ok := strings.CutPrefix(value, UploadPrefix)
	if !ok {
		return "", false
	}
	if len(h) != 64 {
		return "", true
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", true
		}
	}
	return h, true
}

func (f Folders) maxFile() int64 {
	if f.MaxFile > 0 {
		return f.MaxFile
	}
	return DefaultMaxFile
}

func (f Folders) dataFlag() string {
	if f.DataFlag != "" {
		return f.DataFlag
	}
	return "-data DIR"
}

// Resolve returns the file the value names (absolute, its links
// resolved), checked as the package says; field names the value in
// errors (params.x). When the value names a directory and dirFile is not
// "", the file dirFile inside it is taken (the OCR set's folder). The
// value is trimmed of surrounding spaces; an empty value is an error.
func (f Folders) Resolve(field, value, dirFile string) (string, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return "", errorf(field, "names no file")
	}
	if h, ok := UploadHash(v); ok {
		if h == "" {
			return "", errorf(field, "must be %s followed by the 64 hexadecimal digits of an upload's SHA-256, got %s", UploadPrefix, Quote(v))
		}
		if f.Uploads == "" {
			return "", errorf(field, "names the upload %s…, but there are no uploads here", h[:ShortHash])
		}
		root, err := realDir(f.Uploads)
		if err != nil {
			return "", errorf(field, "names the upload %s…, which is not here (it was uploaded to another server, or the server restarted since)", h[:ShortHash])
		}
		full := filepath.Join(root, h)
		if err := f.check(field, full, v); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", errorf(field, "names the upload %s…, which is not here (it was uploaded to another server, or the server restarted since)", h[:ShortHash])
			}
			return "", err
		}
		return full, nil
	}
	if !Local(v) {
		rel := filepath.Clean(filepath.FromSlash(v))
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", errorf(field, "must be a path inside the data folder (%s), got %s, which climbs out of it", f.dataFlag(), Quote(v))
		}
		return "", errorf(field, "must be a path relative to the data folder (%s) or an upload (%sSHA256), not an absolute path: got %s", f.dataFlag(), UploadPrefix, Quote(v))
	}
	rel := filepath.Clean(filepath.FromSlash(v))
	if f.Data == "" {
		return "", errorf(field, "is a path (%s) but there is no data folder here; give it with %s, or upload the file", Quote(v), f.dataFlag())
	}
	root, err := realDir(f.Data)
	if err != nil {
		return "", errorf(field, "is a path (%s) but the data folder %s cannot be read: %v", Quote(v), Quote(f.Data), errors.Unwrap(err))
	}
	full, err := f.resolveIn(field, root, rel, v, dirFile)
	if err != nil {
		return "", err
	}
	return full, nil
}

// resolveIn resolves rel inside root and checks the file it leads to.
func (f Folders) resolveIn(field, root, rel, shown, dirFile string) (string, error) {
	full, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		return "", errorf(field, "no readable file %s inside the data folder", Quote(shown))
	}
	if !Within(root, full) {
		return "", errorf(field, "must be a file inside the data folder (symbolic links are followed), got %s", Quote(shown))
	}
	if dirFile != "" {
		if st, err := os.Stat(full); err == nil && st.IsDir() {
			inner, err := filepath.EvalSymlinks(filepath.Join(full, dirFile))
			if err != nil {
				return "", errorf(field, "no readable file %s inside the folder %s", dirFile, Quote(shown))
			}
			if !Within(root, inner) {
				return "", errorf(field, "must be a file inside the data folder (symbolic links are followed), got %s", Quote(shown))
			}
			full = inner
		}
	}
	if err := f.check(field, full, shown); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errorf(field, "no readable file %s inside the data folder", Quote(shown))
		}
		return "", err
	}
	return full, nil
}

// check opens the file as Open does and closes it.
func (f Folders) check(field, full, shown string) error {
	file, _, err := Open(full, f.maxFile())
	if err != nil {
		var le *LimitError
		switch {
		case errors.Is(err, os.ErrNotExist):
			return err
		case errors.As(err, &le) && le.NotRegular:
			return errorf(field, "must be a regular file (not a directory, device or pipe), got %s", Quote(shown))
		case errors.As(err, &le):
			return errorf(field, "the file %s has %d bytes, over the limit of %d", Quote(shown), le.Size, le.Max)
		}
		return errorf(field, "no readable file %s inside the data folder", Quote(shown))
	}
	file.Close()
	return nil
}

// LimitError is a file Open refused: not a regular file, or too large.
type LimitError struct {
	NotRegular bool
	Mode       os.FileMode
	Size, Max  int64
}

func (e *LimitError) Error() string {
	if e.NotRegular {
		return fmt.Sprintf("not a regular file (%s)", kind(e.Mode))
	}
	return fmt.Sprintf("%d bytes, over the limit of %d", e.Size, e.Max)
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// Open opens path for reading without blocking (O_NONBLOCK: opening a
// FIFO with no writer returns at once), and checks the opened file with
// fstat: a regular file of at most max bytes (max ≤ 0: any size), else a
// *LimitError. The file is then read as any file (O_NONBLOCK has no effect
// on a regular file's reads).
func Open(path string, max int64) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &LimitError{NotRegular: true, Mode: st.Mode()}
	}
	if max > 0 && st.Size() > max {
		f.Close()
		return nil, nil, &LimitError{Size: st.Size(), Max: max}
	}
	return f, st, nil
}

// OpenIn opens the file name inside root as Open does, after refusing an
// absolute or climbing name and a name whose links lead out of root: a
// file a folder's index names (a sweep's cell bundles, a watched folder's
// sweeps). The error names the file (by name) and the rule.
func OpenIn(root, name string, max int64) (*os.File, os.FileInfo, error) {
	if !Local(name) {
		return nil, nil, fmt.Errorf("%s: must be a name inside %s, neither absolute nor climbing out of it", Quote(name), Quote(root))
	}
	rel := filepath.Clean(filepath.FromSlash(name))
	real, err := realDir(root)
	if err != nil {
		return nil, nil, err
	}
	full, err := filepath.EvalSymlinks(filepath.Join(real, rel))
	if err != nil {
		return nil, nil, err
	}
	if !Within(real, full) {
		return nil, nil, fmt.Errorf("%s: is a link that leads out of %s", Quote(name), Quote(root))
	}
	f, st, err := Open(full, max)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, nil, fmt.Errorf("%s: %w", Quote(name), err)
		}
		return nil, nil, err
	}
	return f, st, nil
}

// Local reports whether value is a relative path that stays inside its
// folder (neither absolute nor climbing out), by its text alone.
func Local(value string) bool {
	if value == "" || filepath.IsAbs(value) || strings.HasPrefix(value, "/") || strings.HasPrefix(value, `\`) || filepath.VolumeName(value) != "" {
		return false
	}
	rel := filepath.Clean(filepath.FromSlash(value))
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realDir is dir made absolute with its links resolved.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Within reports whether the clean absolute path full lies inside root
// (or is root).
func Within(root, full string) bool {
	rel, err := filepath.Rel(root, full)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Rel returns the path of full inside the data folder ("" and false when
// it is not inside it), with forward slashes: what travels to a worker,
// which finds it in its own data folder.
func (f Folders) Rel(full string) (string, bool) {
	if f.Data == "" {
		return "", false
	}
	root, err := realDir(f.Data)
	if err != nil || !Within(root, full) {
		return "", false
	}
	rel, err := filepath.Rel(root, full)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// ResolveSpec resolves every data-file parameter (kind Path) the spec
// gives (given, its params as written) and points vals at the files found;
// parameters left at their defaults (empty) are untouched. An OCR
// parameter may name the folder holding the OCR file. Errors are
// *spec.FieldError naming params.NAME.
func (f Folders) ResolveSpec(sc *scenarios.Scenario, given spec.Params, vals scenarios.Values) error {
	for _, p := range sc.Params {
		if p.Kind != scenarios.Path {
			continue
		}
		v, ok := given[p.Name]
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		dirFile := ""
		if p.Format == "ocr" {
			dirFile = ssvm.OCRFile
		}
		full, err := f.Resolve("params."+p.Name, v, dirFile)
		if err != nil {
			return err
		}
		vals[p.Name] = full
	}
	return nil
}

// ConfineRun resolves the data files of run (a spec read from a store, a
// bundle or a sweep document, in place) as ResolveSpec does and writes the
// files found into its params, so that building it reads those files only.
func (f Folders) ConfineRun(run *spec.Run) error {
	sc, ok := scenarios.Lookup(run.Problem)
	if !ok {
		return nil // the build names the unknown problem
	}
	vals := scenarios.Values{}
	if err := f.ResolveSpec(sc, run.Params, vals); err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	params := make(spec.Params, len(run.Params))
	for k, v := range run.Params {
		params[k] = v
	}
	for k, v := range vals {
		params[k] = v
	}
	run.Params = params
	return nil
}
