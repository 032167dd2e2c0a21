package datapath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// UploadKeys finds each hash a message quotes, whole or cut as errors cut
// it, once; OwnNames turns every form of an upload's name into the user's
// file name, paths of its copies included, and leaves other text alone.
func TestOwnNames(t *testing.T) {
	sum := strings.Repeat("0123456789abcdef", 4)
	other := strings.Repeat("f", 64)
	msg := fmt.Sprintf("params.y: names the upload %s…, not here; upload:%s; %q; run abcdefgh2345", sum[:12], sum, UploadName(other))
	keys := UploadKeys(msg + " " + sum)
	if fmt.Sprint(keys) != fmt.Sprint([]string{sum[:12], sum, other}) {
		t.Errorf("UploadKeys = %q", keys)
	}
	if keys := UploadKeys("run abcdefgh2345 stalled at 0.25 after 123456789 passes"); len(keys) != 0 {
		t.Errorf("UploadKeys of a message without hashes = %q", keys)
	}

	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "up loads") // a space: only the exact folder finds the path
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{sum: "y short.csv", other: "x.csv"}
	for _, c := range []struct{ in, want string }{
		{"params.y: names the upload " + sum[:12] + "…, which is not here", "params.y: names the upload y short.csv, which is not here"},
		{"must be upload:" + sum + " or a path", "must be upload:" + sum + " or a path"}, // without names: untouched (below)
		{"params.y: " + filepath.Join(link, sum) + ": line 3", "params.y: y short.csv: line 3"},
		{"params.y: " + filepath.Join(dir, sum) + ": line 3", "params.y: y short.csv: line 3"},
		{"open /var/cache/fwlab/" + sum + "/y: too short", "open y short.csv: too short"},
		{"a path " + Quote(UploadName(sum)) + " then " + UploadName(other), `a path "y short.csv" then x.csv`},
		{"hash " + sum + " and run abcdefgh2345", "hash y short.csv and run abcdefgh2345"},
	} {
		got := OwnNames(c.in, names, link)
		if c.want == c.in {
			got = OwnNames(c.in, nil, link)
		}
		if got != c.want {
			t.Errorf("OwnNames(%q)\n= %q\nwant %q", c.in, got, c.want)
		}
	}
}
