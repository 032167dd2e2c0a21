package bundle

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/store"
)

// A bundle written before any record field was added to the declaration
// (testdata/bundle-v2.json: format version 2, `dashboard solve -problem
// lasso -n 30 -p 12 -algo ssfw-as,afw -iters 20 -eval-every 3 -seed 4
// -format json`) stays readable and keeps its digest in every build, one
// that adds a field included (docs/compatibility.md); encoded again, it
// decodes to the same records with the same digest.
func TestTodaysBundleKeepsItsDigest(t *testing.T) {
	data, err := os.ReadFile("testdata/bundle-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256:5b234e00aa7c94e815264705cd191421be66e0b075df5aca3ff21a0392077f06"
	b, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest != want {
		t.Fatalf("digest %s, want %s", b.Digest, want)
	}
	if err := CheckDigest(b); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := Encode(&again, b); err != nil {
		t.Fatal(err)
	}
	b2, err := Decode(bytes.NewReader(again.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if b2.Digest != want || Digest(b2) != want {
		t.Fatalf("encoded again: digest %s (recomputed %s), want %s", b2.Digest, Digest(b2), want)
	}
	for i := range b.Traces {
		for j := range b.Traces[i].Records {
			if d := recordfields.Diff(&b.Traces[i].Records[j], &b2.Traces[i].Records[j]); d != "" {
				t.Fatalf("trace %d record %d: %s", i, j, d)
			}
		}
	}
	if FormatVersion == 2 && again.String() != string(data) {
		t.Errorf("encoded again, the bundle differs from the file")
	}
}

// A bundle of a newer format is refused, naming both versions.
func TestNewerBundleRefusedNamingBothVersions(t *testing.T) {
	data, err := os.ReadFile("testdata/bundle-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	newer := strconv.FormatInt(FormatVersion+1, 10)
	_, err = Decode(strings.NewReader(strings.Replace(string(data), `"format_version":2`, `"format_version":`+newer, 1)))
	if err == nil {
		t.Fatal("a newer bundle was read")
	}
	for _, s := range []string{"format_version", newer, strconv.FormatInt(FormatVersion, 10)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}

// An import gives every bundle the content digest it had before imports
// copied numbers as read (the values computed by that fwlab): the bundles
// of testdata, a long run's records (runBundle) and random records with
// non-finite numbers (testBundle).
func TestContentDigestsKept(t *testing.T) {
	// A build with a record field added (-tags recordfields_extra, a
	// higher format version) keeps the digests of the bundles written
	// before it (the files of testdata); the records it makes itself
	// carry the new field, so its own bundles differ.
	added := FormatVersion != contentDigestFormat
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	read := func(name string) []byte {
		d, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"bundle-v2.json", read("testdata/bundle-v2.json"), "sha256:12ab2ce8f5d61d37aa4bb2631636a41449bb7738a1f23e6881ffda2f3e75480e"},
		{"digest-small.json", read("testdata/digest-small.json"), "sha256:03e7016e176e8e50128bc827411d4fcdf825da65c19403d5a8004faddcf34180"},
		{"a run", encodeT(t, runBundle(3, 3000)), "sha256:6908b9e1974b7028a49e3ec6eebf8fd39e0915ac4ac50fad2e47a1a77e462b67"},
		{"random records", encodeT(t, testBundle(rand.New(rand.NewPCG(41, 42)), 300)), "sha256:ed26bfe0be49ea2d9b8288e22973ebdc06073a641f9a2dfebd45d8a3e5920a77"},
	} {
		if added && !strings.HasSuffix(c.name, ".json") {
			continue
		}
		res, err := Import(context.Background(), st, bytes.NewReader(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Digest != c.want {
			t.Errorf("%s: content digest %s, before %s", c.name, res.Digest, c.want)
		}
	}
}
