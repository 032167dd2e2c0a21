package server

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// Upload formats: the form field "format" names one; without it the file's
// extension decides (.csv → csv, .gz/.tsv → ocr, anything else svmlight).
const (
	FormatCSV      = "csv"      // plain comma-separated numbers (x and y of the models, GFLASSO's X and Y)
	FormatSVMLight = "svmlight" // svmlight/LIBSVM (the data of logistic and svm-dual)
	FormatOCR      = "ocr"      // the OCR letters TSV, optionally gzip-compressed (ssvm-ocr's data)
)

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
