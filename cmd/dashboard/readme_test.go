package main

import (
	"encoding/json"
	"fmt"
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

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codeLines returns the commands of the README's fenced code blocks: lines
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

// shellWords splits a command line as sh does for the README's examples:
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

// The README's curl example, run as it stands (with the test server's
// address for localhost:8080) against a server from internal/server's
// constructor: with curl when it is installed, else by sending the same
// method, headers and body.
func TestReadmeCurlExample(t *testing.T) {
	doc := readme(t)
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
		t.Fatal("the README has no curl example")
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
	// written (the run the README's answer shows), then the command itself
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
	// The answer the README shows has the form of the server's: a run
	// id is 12 random characters of a-z and 2-7.
	if !store.ValidID(created.ID) || !regexp.MustCompile(`201 \{"id":"[a-z2-7]{12}"\}`).MatchString(doc) {
		t.Errorf("the README's answer differs in form from the server's %s", body)
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
			t.Errorf("the README does not give %s", path)
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
	doc := readme(t)
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

// Every field of the JSON run spec is documented in the README.
func TestReadmeDocumentsEverySpecField(t *testing.T) {
	doc := readme(t)
	for _, typ := range []reflect.Type{reflect.TypeOf(spec.Run{}), reflect.TypeOf(spec.Algo{})} {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("the README does not document the run spec's %q", name)
			}
		}
	}
}

// Every solve example of the README parses and runs: in a temporary
// directory holding the small data files the examples name, with the
// iterations capped (an -iters flag appended wins over the example's) and
// the figure presets reduced. Examples that need the OCR data only check
// their flags and spec (-print-spec) unless FWLAB_SLOW_TESTS is set.
func TestReadmeSolveExamples(t *testing.T) {
	doc := readme(t)
	dir := t.TempDir()
	files := map[string]string{
		"X.csv":     "",
		"y.csv":     "",
		"train.svm": "",
	}
	var x, y, svm strings.Builder
	for i := 0; i < 30; i++ {
		var row []string
		yi := 0.0
		for j := 0; j < 5; j++ {
			v := float64((i*7+j*3)%11)/5 - 1
			row = append(row, fmt.Sprint(v))
			yi += float64(j%3) * v
		}
		x.WriteString(strings.Join(row, ",") + "\n")
		fmt.Fprintf(&y, "%g\n", yi+float64(i%3)/10)
		label := "+1"
		if yi+float64(i%4)/4 < 0.5 {
			label = "-1"
		}
		fmt.Fprintf(&svm, "%s 1:%s 2:%s 4:%s\n", label, row[0], row[1], row[3])
	}
	files["X.csv"], files["y.csv"], files["train.svm"] = x.String(), y.String(), svm.String()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	_, errOCR := ssvm.ResolveOCR("")
	slow := os.Getenv("FWLAB_SLOW_TESTS") != ""

	n := 0
	for _, l := range codeLines(doc) {
		words := shellWords(t, l)
		if len(words) < 4 || strings.Join(words[:4], " ") != "go run ./cmd/dashboard solve" {
			continue
		}
		n++
		args := words[4:]
		t.Run(strings.Join(args, " "), func(t *testing.T) {
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
				if !strings.Contains(out, "cell 2 ") {
					t.Errorf("the sweep printed %q, want a line per cell", out)
				}
			} else if !strings.Contains(joined, "-out ") && !strings.Contains(joined, "-print-spec") && !strings.Contains(strings.Join(run, " "), "-print-spec") && !strings.Contains(out, `"summary"`) {
				t.Errorf("no summary in the output: %.200s", out)
			}
		})
	}
	if n < 8 {
		t.Fatalf("found %d solve examples in the README, expected at least 8", n)
	}
}
