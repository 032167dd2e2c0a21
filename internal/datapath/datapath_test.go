package datapath_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/spec"
)

const secret = "root:x:0:0:root:/root:/bin/bash"

// tree makes a data folder, an uploads folder and, beside them, a secret
// file whose content no error may quote.
func tree(t *testing.T) (base, data, up, sum string) {
	t.Helper()
	base = t.TempDir()
	data, up = filepath.Join(base, "data"), filepath.Join(base, "up")
	for _, d := range []string{data, up, filepath.Join(data, "sub"), filepath.Join(data, "ocr")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(base, "secret.csv"), secret+"\n")
	write(filepath.Join(data, "ok.csv"), "1\n")
	write(filepath.Join(data, "sub", "deep.csv"), "1\n")
	write(filepath.Join(data, "big.csv"), strings.Repeat("1\n", 600))
	write(filepath.Join(data, "ocr", "letter.data"), "1\n")
	h := sha256.Sum256([]byte("1,2\n"))
	sum = hex.EncodeToString(h[:])
	write(filepath.Join(up, sum), "1,2\n")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(base, "secret.csv"), filepath.Join(data, "link.csv")))
	must(os.Symlink(filepath.Join(data, "ok.csv"), filepath.Join(data, "inner.csv")))
	must(os.Symlink(base, filepath.Join(data, "sub", "out")))
	must(os.Symlink("/dev/zero", filepath.Join(data, "zero.csv")))
	must(syscall.Mkfifo(filepath.Join(data, "fifo.csv"), 0o644))
	return base, data, up, sum
}

// Every value a spec may give is resolved by one rule: an upload by its
// hash, a relative path inside the data folder; an absolute or climbing
// path, a link out, a FIFO, a device, a directory, a file over the limit
// are refused naming the field and the rule, quoting no file content.
func TestResolveRule(t *testing.T) {
	base, data, up, sum := tree(t)
	f := datapath.Folders{Data: data, Uploads: up, MaxFile: 1000}
	realData, _ := filepath.EvalSymlinks(data)
	realUp, _ := filepath.EvalSymlinks(up)
	for value, want := range map[string]string{
		"ok.csv":         filepath.Join(realData, "ok.csv"),
		" sub/deep.csv ": filepath.Join(realData, "sub", "deep.csv"),
		"sub/../ok.csv":  filepath.Join(realData, "ok.csv"),
		"inner.csv":      filepath.Join(realData, "ok.csv"),
		"upload:" + sum:  filepath.Join(realUp, sum),
		"ocr":            filepath.Join(realData, "ocr", "letter.data"),
	} {
		got, err := f.Resolve("params.x", value, "letter.data")
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", value, got, err, want)
		}
	}
	cases := []struct{ value, rule string }{
		{"/etc/passwd", "not an absolute path"},
		{filepath.Join(data, "ok.csv"), "not an absolute path"},
		{"/dev/zero", "not an absolute path"},
		{"../secret.csv", "climbs out"},
		{"sub/../../secret.csv", "climbs out"},
		{"..", "climbs out"},
		{"link.csv", "symbolic links are followed"},
		{"sub/out/secret.csv", "symbolic links are followed"},
		{"zero.csv", "symbolic links are followed"},
		{"fifo.csv", "must be a regular file"},
		{"sub", "must be a regular file"},
		{"missing.csv", "no readable file"},
		{"big.csv", "over the limit of 1000"},
		{"upload:" + strings.Repeat("0", 64), "which is not here"},
		{"upload:../../secret.csv", "64 hexadecimal digits"},
		{"upload:" + strings.ToUpper(sum), "64 hexadecimal digits"},
		{"", "names no file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := f.Resolve("params.x", c.value, ""); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%q: Resolve still blocked after 20 s", c.value)
		}
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != "params.x" || !strings.Contains(fe.Msg, c.rule) {
			t.Errorf("%q: %v, want params.x: …%s…", c.value, err, c.rule)
			continue
		}
		if strings.Contains(err.Error(), "root:") || len(err.Error()) > 300 {
			t.Errorf("%q: the error quotes too much: %v", c.value, err)
		}
	}
	// Without a data folder only uploads may be named; without uploads,
	// only paths.
	if _, err := (datapath.Folders{Uploads: up}).Resolve("params.x", "ok.csv", ""); err == nil || !strings.Contains(err.Error(), "no data folder") {
		t.Errorf("no data folder: %v", err)
	}
	if _, err := (datapath.Folders{Data: data}).Resolve("params.x", "upload:"+sum, ""); err == nil || !strings.Contains(err.Error(), "no uploads here") {
		t.Errorf("no uploads: %v", err)
	}
	_ = base
}

// Open never blocks on a FIFO and refuses what is not a regular file; OpenIn
// keeps a name inside its folder.
func TestOpenRegularOnly(t *testing.T) {
	base, data, _, _ := tree(t)
	for _, p := range []string{filepath.Join(data, "fifo.csv"), "/dev/zero", data} {
		done := make(chan error, 1)
		go func() {
			f, _, err := datapath.Open(p, 1<<20)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			var le *datapath.LimitError
			if !errors.As(err, &le) || !le.NotRegular {
				t.Errorf("%s: %v, want not a regular file", p, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: Open still blocked after 20 s", p)
		}
	}
	f, st, err := datapath.OpenIn(data, "sub/deep.csv", 10)
	if err != nil || st.Size() != 2 {
		t.Fatalf("OpenIn: %v", err)
	}
	f.Close()
	for _, name := range []string{"../secret.csv", filepath.Join(base, "secret.csv"), "link.csv", "fifo.csv", "big.csv"} {
		if f, _, err := datapath.OpenIn(data, name, 1000); err == nil {
			f.Close()
			t.Errorf("OpenIn %q: opened", name)
		} else if strings.Contains(err.Error(), "root:") {
			t.Errorf("OpenIn %q: %v quotes the file", name, err)
		}
	}
}
