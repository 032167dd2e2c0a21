package main

import (
	"encoding/json"
	"fmt"
	"github.com/fwlab/fwlab/internal/recordfields"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store"
)

// docPage is one of the user's documents: the README or a page of docs/.
type docPage struct {
	name string // its path from the repository's root: "README.md", "docs/api.md"
	text string
}

// docPages returns the named documents (paths from the repository's root,
// "README.md" or "docs/NAME.md"), failing the test when one is missing;
// with no name, README.md and every page of docs/ in the order of their
// names.
func docPages(t *testing.T, names ...string) []docPage {
	t.Helper()
	root := filepath.Join("..", "..")
	if len(names) == 0 {
		pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
		if err != nil || len(pages) == 0 {
			t.Fatalf("no pages in docs/: %v", err)
		}
		names = []string{"README.md"}
		for _, p := range pages {
			names = append(names, "docs/"+filepath.Base(p))
		}
	}
	out := make([]docPage, len(names))
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = docPage{name, string(b)}
	}
	return out
}

// docText returns the text of one document (a path from the repository's
// root, as for docPages).
func docText(t *testing.T, name string) string {
	t.Helper()
	return docPages(t, name)[0].text
}

// codeLines returns the commands of a document's fenced code blocks: lines
// with backslash continuations joined, and a single-quoted string that
// spans lines kept whole.
func codeLines(doc string) []string {
	var out []string
	in := false
	cur := ""
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\")
			continue
		}
		cur += l
		if strings.Count(cur, "'")%2 == 1 {
			cur += "\n"
			continue
		}
		out = append(out, cur)
		cur = ""
	}
	return out
}

// shellWords splits a command line as sh does for the documents' examples:
// blanks separate words, single quotes keep everything, a # starts a
// comment.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted:
			if c == '\'' {
				quoted = false
			} else {
				w.WriteByte(c)
			}
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// The curl example of docs/api.md, run as it stands (with the test
// server's address for localhost:8080) against a server from
// internal/server's constructor: with curl when it is installed, else by
// sending the same method, headers and body.
func TestReadmeCurlExample(t *testing.T) {
	doc := docText(t, "docs/api.md")
	var cmd string
	for _, l := range codeLines(doc) {
		// the example that starts a run: curl posting a body to /api/runs
		c := strings.TrimSpace(l)
		if strings.HasPrefix(c, "curl ") && strings.Contains(c, "/api/runs ") && strings.Contains(c, " -d ") {
			cmd = c
			break
		}
	}
	if cmd == "" {
		t.Fatal("docs/api.md has no curl example")
	}
	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() { ts.Close(); srv.Close() }()
	const documented = "http://localhost:8080"
	if !strings.Contains(cmd, documented+"/api/runs") {
		t.Fatalf("the curl example does not post to %s/api/runs: %s", documented, cmd)
	}
	cmd = strings.ReplaceAll(cmd, documented, ts.URL)

	// First the example's method, headers and body sent as they are
	// written (the run the page's answer shows), then the command itself
	// with curl when it is installed.
	body := sendAsWritten(t, cmd)
	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command("sh", "-c", cmd+` -w '\n%{http_code}'`).Output()
		if err != nil {
			t.Fatalf("%s: %v", curl, err)
		}
		s := strings.TrimSpace(string(out))
		i := strings.LastIndex(s, "\n")
		if i < 0 || s[i+1:] != "201" {
			t.Fatalf("curl printed %q, want the answer and status 201", s)
		}
		var second struct{ ID string }
		if err := json.Unmarshal([]byte(s[:i]), &second); err != nil || second.ID == "" {
			t.Fatalf("curl's answer %q: %v", s[:i], err)
		}
		waitDone(t, ts.URL, second.ID)
	} else {
		t.Log("curl is not installed: the example was checked by its method, headers and body only")
	}
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); err != nil || created.ID == "" {
		t.Fatalf("answer %q: %v", body, err)
	}
	// The answer the page shows has the form of the server's: a run
	// id is 12 random characters of a-z and 2-7.
	if !store.ValidID(created.ID) || !regexp.MustCompile(`201 \{"id":"[a-z2-7]{12}"\}`).MatchString(doc) {
		t.Errorf("the answer docs/api.md shows differs in form from the server's %s", body)
	}
	waitDone(t, ts.URL, created.ID)

	// The run is what the spec asked for: lasso, ssfw-as and fista, 3 replications each.
	resp, err := http.Get(ts.URL + "/api/runs/" + created.ID)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Spec   spec.Run
		Traces []struct{ Algo string }
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Spec.Problem != "lasso" || len(st.Traces) != 6 {
		t.Fatalf("status: %v %+v", err, st)
	}
	// The documented run page and trace URLs answer.
	for _, path := range []string{"/runs/" + created.ID, "/api/runs/" + created.ID + "/trace"} {
		if !strings.Contains(doc, strings.ReplaceAll(path, created.ID, "{id}")) && !strings.Contains(doc, path) {
			t.Errorf("docs/api.md does not give %s", path)
		}
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}

// sendAsWritten sends the request a curl command line describes (-X, -H,
// -d and the URL) and returns the body of its 201 answer.
func sendAsWritten(t *testing.T, cmd string) []byte {
	t.Helper()
	words := shellWords(t, cmd)
	method, url, data := "GET", "", ""
	hdr := http.Header{}
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-s":
		case "-X":
			i++
			method = words[i]
		case "-H":
			i++
			k, v, ok := strings.Cut(words[i], ":")
			if !ok {
				t.Fatalf("header %q", words[i])
			}
			hdr.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		case "-d", "--data":
			i++
			data = words[i]
			if method == "GET" {
				method = "POST"
			}
		default:
			if strings.HasPrefix(words[i], "-") {
				t.Fatalf("the example uses curl's %s, which this test does not know", words[i])
			}
			url = words[i]
		}
	}
	req, err := http.NewRequest(method, url, strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return body
}

// The README says how to change the port, and the Makefile does what it
// says.
func TestReadmeAddr(t *testing.T) {
	doc := docText(t, "README.md")
	for _, want := range []string{"make run ADDR=", "serve -addr"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the README does not mention %q", want)
		}
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ADDR\s*\?=`).Match(mk) || !strings.Contains(string(mk), "serve -addr $(ADDR)") {
		t.Error("the Makefile's run target does not take ADDR")
	}
}

// The README is a front door: at most 250 lines, linking every page of
// docs/ (so none is left where no reader finds it).
func TestReadmeLinksEveryPage(t *testing.T) {
	pages := docPages(t)
	readme := pages[0]
	if readme.name != "README.md" {
		t.Fatalf("the first document is %s, want README.md", readme.name)
	}
	if n := strings.Count(readme.text, "\n"); n > 250 {
		t.Errorf("the README has %d lines, at most 250 wanted: move the details to a page of docs/", n)
	}
	for _, pg := range pages[1:] {
		if !strings.Contains(readme.text, "]("+pg.name+")") && !strings.Contains(readme.text, "]("+pg.name+"#") {
			t.Errorf("the README does not link %s", pg.name)
		}
	}
}

// Every field of the JSON run spec is documented in docs/api.md.
func TestReadmeDocumentsEverySpecField(t *testing.T) {
	doc := docText(t, "docs/api.md")
	for _, typ := range []reflect.Type{reflect.TypeOf(spec.Run{}), reflect.TypeOf(spec.Algo{})} {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/api.md does not document the run spec's %q", name)
			}
		}
	}
}

// solveExamplePages are the pages whose fenced code blocks hold solve
// examples, each with the number of examples it holds.
var solveExamplePages = map[string]int{
	"docs/solve.md":         9,
	"docs/figures.md":       4,
	"docs/paper-figures.md": 4,
	"docs/problems.md":      1,
	"docs/store.md":         3,
	"docs/studies.md":       1,
}

// inlineSolveRe finds a solve command quoted inline (`go run … solve …`).
var inlineSolveRe = regexp.MustCompile("`(go run ./cmd/dashboard solve [^`]*)`")

// Every solve example of the README and the docs/ pages parses and runs: in
// a temporary directory holding a copy of examples/ (the data files they
// name), with the iterations capped (an -iters flag appended wins over the
// example's) and the figure presets reduced. Examples that need the OCR
// data only check their flags and spec (-print-spec) unless
// FWLAB_SLOW_TESTS is set. Each page of solveExamplePages holds its
// examples, and every solve command the README quotes inline is one of them.
func TestReadmeSolveExamples(t *testing.T) {
	pages := docPages(t)
	dir := t.TempDir()
	copyExamples(t, dir)
	t.Chdir(dir)
	_, errOCR := ssvm.ResolveOCR("")
	slow := os.Getenv("FWLAB_SLOW_TESTS") != ""

	found := map[string]int{}
	fenced := map[string]bool{}
	for _, pg := range pages {
		for _, l := range codeLines(pg.text) {
			words := shellWords(t, l)
			if len(words) < 4 || strings.Join(words[:4], " ") != "go run ./cmd/dashboard solve" {
				continue
			}
			found[pg.name]++
			fenced[strings.Join(words, " ")] = true
			runSolveExample(t, pg.name, words[4:], errOCR, slow)
		}
	}
	for name, want := range solveExamplePages {
		if found[name] < want {
			t.Errorf("found %d solve examples in %s, expected at least %d", found[name], name, want)
		}
	}
	if pages[0].name != "README.md" {
		t.Fatalf("the first document is %s, want README.md", pages[0].name)
	}
	for _, m := range inlineSolveRe.FindAllStringSubmatch(pages[0].text, -1) {
		if !fenced[strings.Join(shellWords(t, m[1]), " ")] {
			t.Errorf("the README quotes %q, which no page's examples run", m[1])
		}
	}
}

// runSolveExample runs one solve example (its arguments after "solve") of
// the named page as TestReadmeSolveExamples says.
func runSolveExample(t *testing.T, page string, args []string, errOCR error, slow bool) {
	t.Helper()
	t.Run(strings.TrimPrefix(page, "docs/")+": "+strings.Join(args, " "), func(t *testing.T) {
		joined := " " + strings.Join(args, " ") + " "
		ocr := strings.Contains(joined, " ssvm-ocr ") || strings.Contains(joined, " paper-fig2 ")
		run := append([]string(nil), args...)
		switch {
		case len(args) == 1 && args[0] == "-h":
		case ocr && !(slow && errOCR == nil):
			if strings.Contains(joined, " paper-fig2 ") {
				t.Skip("paper-fig2 needs the OCR data and minutes; set FWLAB_SLOW_TESTS=1 with the data present")
			}
			run = append(run, "-print-spec")
		case strings.Contains(joined, " paper-fig1 "):
			run = append(run, "-replications", "2", "-iters", "20", "-n", "60", "-j", "12")
		case strings.Contains(joined, " paper-fig2 "):
			run = append(run, "-passes", "0.002", "-eval-every", "1000")
		case strings.Contains(joined, " -sweep "):
			// a sweep's limits are in its document: run as written
		default:
			run = append(run, "-iters", "30")
		}
		out, stderr, code := solve(t, run...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", run, code, stderr)
		}
		for i, a := range args {
			if (a == "-out" || a == "-save-x") && i+1 < len(args) && !strings.Contains(joined, "-print-spec") {
				if st, err := os.Stat(args[i+1]); err != nil || st.Size() == 0 {
					t.Errorf("%s %s: %v", a, args[i+1], err)
				}
			}
		}
		if len(args) == 1 && args[0] == "-h" {
			if !strings.Contains(stderr, "usage: dashboard solve") {
				t.Errorf("-h printed %q", stderr)
			}
		} else if strings.Contains(joined, " -sweep ") {
			want := "cell 2 "
			for i, a := range args {
				if a == "-cell" && i+1 < len(args) {
					want = "cell " + args[i+1] + " "
				}
			}
			if !strings.Contains(out, want) {
				t.Errorf("the sweep printed %q, want a line for %q", out, want)
			}
		} else if !strings.Contains(joined, "-out ") && !strings.Contains(joined, "-print-spec") && !strings.Contains(strings.Join(run, " "), "-print-spec") && !strings.Contains(out, `"summary"`) {
			t.Errorf("no summary in the output: %.200s", out)
		}
	})
}

// readmeBlock is a fenced code block of a document: its language and lines.
type readmeBlock struct {
	lang  string
	lines []string
	at    int // line number of the opening fence
}

func readmeBlocks(doc string) []readmeBlock {
	var out []readmeBlock
	var cur *readmeBlock
	for i, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			if cur == nil {
				cur = &readmeBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), at: i + 1}
			} else {
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, l)
		}
	}
	return out
}

// volatile are the record fields that differ from run to run: the ones
// declared wall clock (internal/recordfields).
var volatile = recordfields.WallClock

var runIDRe = regexp.MustCompile(`\b[a-z2-7]{12}\b`)

// digestRe is a bundle's digest, which covers the wall-time fields.
var digestRe = regexp.MustCompile(`\bsha256:[0-9a-f]{64}\b`)

// sameOutputLine compares a line a document quotes with the one a command
// printed, on what is stable: JSON records field by field without the
// wall-time fields, other lines with run and sweep ids and digests masked.
func sameOutputLine(want, got string) bool {
	if strings.HasPrefix(want, "{") {
		var w, g map[string]any
		if json.Unmarshal([]byte(want), &w) != nil || json.Unmarshal([]byte(got), &g) != nil {
			return false
		}
		for _, k := range volatile {
			delete(w, k)
			delete(g, k)
		}
		return reflect.DeepEqual(w, g)
	}
	mask := func(s string) string {
		return runIDRe.ReplaceAllString(digestRe.ReplaceAllString(s, "sha256:DIGEST"), "ID")
	}
	return mask(want) == mask(got)
}

// copyExamples copies the repository's examples/ folder into dir.
func copyExamples(t *testing.T, dir string) {
	t.Helper()
	src := filepath.Join("..", "..", "examples")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue // a Go example program (examples/matrixcompletion, …): no data file
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "examples", e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// outputPages are the pages that quote the outputs of their commands, each
// with the number of outputs it quotes.
var outputPages = map[string]int{
	"docs/solve.md":   1,
	"docs/store.md":   2,
	"docs/studies.md": 2,
}

// Every output the README or a docs/ page quotes (a ```text block right
// after a ```sh block) is what its commands print: the sh block's commands
// are run in order with the binary built once, from a directory of the
// page's own holding a copy of examples/ (and a store of its own, shared in
// the page's order), and the last command's first lines are compared with
// the quoted ones (up to a "…" line) on what is stable. Each page of
// outputPages quotes its outputs.
func TestReadmeOutputsHold(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "dashboard")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	found := map[string]int{}
	for _, pg := range docPages(t) {
		found[pg.name] = checkOutputs(t, bin, pg)
	}
	for name, want := range outputPages {
		if found[name] < want {
			t.Errorf("found %d quoted outputs in %s, expected at least %d", found[name], name, want)
		}
	}
}

// checkOutputs checks the quoted outputs of one page as TestReadmeOutputsHold
// says and returns how many it quotes.
func checkOutputs(t *testing.T, bin string, pg docPage) int {
	t.Helper()
	blocks := readmeBlocks(pg.text)
	// one directory for every example of the page, in its order: a later
	// example may use what an earlier one wrote (import sweep1)
	dir := t.TempDir()
	copyExamples(t, dir)
	n := 0
	for i, b := range blocks {
		if b.lang != "text" || i == 0 || blocks[i-1].lang != "sh" {
			continue
		}
		n++
		cmds := codeLines("```\n" + strings.Join(blocks[i-1].lines, "\n") + "\n```")
		t.Run(fmt.Sprintf("%s line %d", strings.TrimPrefix(pg.name, "docs/"), b.at), func(t *testing.T) {
			var out []byte
			for _, c := range cmds {
				words := shellWords(t, c)
				if len(words) < 3 || strings.Join(words[:3], " ") != "go run ./cmd/dashboard" {
					t.Fatalf("%s line %d: %q is not a dashboard command", pg.name, blocks[i-1].at, c)
				}
				cmd := exec.Command(bin, words[3:]...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
				var stderr strings.Builder
				cmd.Stderr = &stderr
				var err error
				out, err = cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v: %s", c, err, stderr.String())
				}
			}
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			for k, want := range b.lines {
				if strings.TrimSpace(want) == "…" {
					break
				}
				if k >= len(got) {
					t.Fatalf("%s line %d: the command printed %d lines, the page quotes more", pg.name, b.at+1+k, len(got))
				}
				if !sameOutputLine(want, got[k]) {
					t.Errorf("%s line %d quotes\n%s\nthe command printed\n%s", pg.name, b.at+1+k, want, got[k])
				}
			}
		})
	}
	return n
}
