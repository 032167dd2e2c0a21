package datapath

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ShortHash is how many leading digits of an upload's SHA-256 an error
// quotes ("names the upload 3fa2c41b0e9d…").
const ShortHash = 12

// hexRun is a run of lowercase hexadecimal digits long enough to quote an
// upload's hash.
var hexRun = regexp.MustCompile(`[0-9a-f]{12,}`)

// UploadKeys returns what in msg may name an upload by its hash, each
// once: a whole SHA-256 (64 digits), else the first ShortHash digits of a
// run of at least as many (as errors quote them). OwnNames's names are
// looked up by these.
func UploadKeys(msg string) []string {
	var keys []string
	for _, run := range hexRun.FindAllString(msg, -1) {
		k := run
		if len(run) != 64 {
			k = run[:ShortHash]
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// OwnNames rewrites a message about uploaded files to name each as the
// user sent it: names maps an upload's SHA-256 to its name. Each of these
// becomes the name: a path in dirs (the folders where uploads are kept by
// their hash, links resolved or not) followed by the hash, any other path
// with the hash as a file or folder (another server's copy, a worker's
// <cache>/SHA256/<file>), the spec's upload:SHA256 (whole, or quoted as
// errors quote it), and the bare hash or its first ShortHash digits.
func OwnNames(msg string, names map[string]string, dirs ...string) string {
	for sum, name := range names {
		if name == "" || len(sum) != 64 || !strings.Contains(msg, sum[:ShortHash]) {
			continue
		}
		var pairs []string
		for _, d := range dirs {
			pairs = append(pairs, filepath.Join(d, sum), name)
			if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
				pairs = append(pairs, filepath.Join(real, sum), name)
			}
		}
		msg = strings.NewReplacer(pairs...).Replace(msg)
		msg = regexp.MustCompile(`[^\s"'`+"`"+`]*/`+sum+`(?:/[A-Za-z0-9._-]+)?`).ReplaceAllLiteralString(msg, name)
		up := UploadName(sum)
		msg = strings.NewReplacer(
			Quote(up), strconv.Quote(name),
			up, name,
			sum, name,
			sum[:ShortHash]+"…", name,
			sum[:ShortHash], name,
		).Replace(msg)
	}
	return msg
}
