package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
)

// The server reads data files only from its data folders, after resolving
// symbolic links, and only regular files within the size limit; errors name
// the parameter and the rule and quote at most 40 characters.
func TestDataFileRules(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	up := filepath.Join(base, "up")
	outside := filepath.Join(base, "secret.csv")
	for _, d := range []string{data, up, filepath.Join(data, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, n int) {
		if err := os.WriteFile(p, []byte(strings.Repeat("1\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, 1)
	write(filepath.Join(data, "ok.csv"), 1)
	write(filepath.Join(data, "big.csv"), 600)
	sum := sha256.Sum256([]byte("1\n"))
	upload := hex.EncodeToString(sum[:])
	write(filepath.Join(up, upload), 1)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(data, "link.csv")))
	must(os.Symlink(filepath.Join(data, "ok.csv"), filepath.Join(data, "inner.csv")))
	must(os.Symlink(base, filepath.Join(data, "sub", "up")))
	must(syscall.Mkfifo(filepath.Join(data, "fifo"), 0o644))

	m := newManager(t, session.Options{DataDir: data, UploadDir: up, MaxFile: 1000})
	good := []string{"ok.csv", "inner.csv", "upload:" + upload}
	for _, g := range good {
		r, err := m.Create(context.Background(), fakeSpec(2, spec.Params{"data": g}, "fw"))
		if err != nil {
			t.Errorf("%q: %v", g, err)
			continue
		}
		waitDone(t, r)
	}
	long := "/etc/" + strings.Repeat("x", 200)
	cases := []struct{ path, rule string }{
		{"/etc/passwd", "not an absolute path"},
		{"/proc/self/environ", "not an absolute path"},
		{"/dev/zero", "not an absolute path"},
		{filepath.Join(data, "ok.csv"), "not an absolute path"},
		{filepath.Join(up, upload), "not an absolute path"},
		{"../secret.csv", "climbs out"},
		{"link.csv", "symbolic links are followed"},
		{"sub/up/secret.csv", "symbolic links are followed"},
		{"fifo", "must be a regular file"},
		{"sub", "must be a regular file"},
		{"missing.csv", "no readable file"},
		{"big.csv", "over the limit of 1000"},
		{long, "not an absolute path"},
	}
	for _, c := range cases {
		_, err := m.Create(context.Background(), fakeSpec(2, spec.Params{"data": c.path}, "fw"))
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != "params.data" || !strings.Contains(fe.Msg, c.rule) {
			t.Errorf("%q: %v, want params.data: …%s…", c.path, err, c.rule)
			continue
		}
		if len(fe.Msg) > 300 {
			t.Errorf("%q: message of %d bytes quotes too much: %s", c.path, len(fe.Msg), fe.Msg)
		}
	}

	// Without a data directory only uploads may be read.
	bare := newManager(t, session.Options{UploadDir: up})
	for _, p := range []string{"ok.csv", filepath.Join(data, "ok.csv"), "/etc/passwd"} {
		_, err := bare.Create(context.Background(), fakeSpec(2, spec.Params{"data": p}, "fw"))
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != "params.data" {
			t.Errorf("no data dir, %q: %v", p, err)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"a\x00b":                `"a\x00b"`,
		strings.Repeat("é", 50): `"` + strings.Repeat("é", 40) + `"…`,
		"\"x\"":                 `"\"x\""`,
	} {
		if got := session.Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
