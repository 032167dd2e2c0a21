package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// Every state-changing route, found by walking the router (so a route
// added later is tried too), is refused cross-site for every method that
// changes state (POST, PUT, PATCH, DELETE): by Sec-Fetch-Site, by an
// Origin that is not the server's, and from a sibling site; nothing it
// names is changed. The same requests from the server's own pages pass the
// guard (whatever the handler then answers).
func TestEveryMutatingRouteRefusesCrossSite(t *testing.T) {
	srv, ts := newTestServer(t, Options{UploadDir: t.TempDir()})
	id := create(t, ts, fakeRun(20, "fw"))
	waitFinished(t, srv, id)
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, map[string]any{"base": fakeRun(5, "fw"), "axes": []map[string]any{{"param": "seed", "values": []int{1}}}}))
	var sw struct{ ID string }
	if code != 201 || json.Unmarshal(body, &sw) != nil {
		t.Fatalf("a sweep: %d %s", code, body)
	}
	waitFor(t, "the sweep", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+sw.ID, nil)
		var got struct{ Status string }
		return json.Unmarshal(body, &got) == nil && got.Status == "done"
	})

	type route struct{ method, path string }
	var routes []route
	seen := map[string]bool{}
	err := chi.Walk(srv.router, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodConnect:
			return nil
		}
		path := strings.NewReplacer("{id}", id, "{trace}", "0", "{n}", "1", "/*", "/x").Replace(pattern)
		if strings.HasPrefix(pattern, "/api/sweeps/{id}") {
			path = strings.Replace(pattern, "{id}", sw.ID, 1)
		}
		routes = append(routes, route{method, path})
		seen[path] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 10 {
		t.Fatalf("only %d state-changing routes found: %v", len(routes), routes)
	}
	// every method on every such path: a guard that checks POST alone
	// would let PUT, PATCH and DELETE through
	methods := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	for path := range seen {
		for _, m := range methods {
			routes = append(routes, route{m, path})
		}
	}
	foreign := map[string]map[string]string{
		"cross-site":        {"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
		"same-site sibling": {"Sec-Fetch-Site": "same-site", "Origin": "http://evil.localhost"},
		"origin only":       {"Origin": "http://evil.example"},
		"origin on a port":  {"Origin": "http://127.0.0.1:1"},
		"origin null":       {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
	}
	for _, r := range routes {
		for name, hdr := range foreign {
			hdr := map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": hdr["Sec-Fetch-Site"], "Origin": hdr["Origin"]}
			if hdr["Sec-Fetch-Site"] == "" {
				delete(hdr, "Sec-Fetch-Site")
			}
			body := `{"ids":["` + id + `"]}` // what POST /api/runs/delete takes
			if r.method == http.MethodPatch {
				body = `{"name":"x"}` // what PATCH /api/runs/{id} takes
			}
			code, _, body2 := send(t, ts, attackReq{method: r.method, path: r.path, body: body, header: hdr})
			body = string(body2)
			if code != http.StatusForbidden || !strings.Contains(body, "cross-origin") {
				t.Errorf("%s %s (%s): %d %.200s, want 403 cross-origin", r.method, r.path, name, code, body)
			}
		}
	}
	// nothing changed: the run and the sweep are there, named as before
	if st := status(t, ts, id); st.Status != "done" {
		t.Errorf("the run after the attempts: %+v", st)
	}
	if code, body := do(t, "GET", ts.URL+"/api/runs/"+id, nil); code != 200 || bytes.Contains(body, []byte(`"name":"x"`)) {
		t.Errorf("the run after the attempts: %d %s", code, body)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/sweeps/"+sw.ID, nil); code != 200 {
		t.Errorf("the sweep after the attempts: %d", code)
	}
	// the same from the server's own page passes the guard
	own := map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin", "Origin": ts.URL}
	code, _, body = send(t, ts, attackReq{method: "PATCH", path: "/api/runs/" + id, body: `{"name":"mine"}`, header: own})
	if code != 200 {
		t.Errorf("PATCH from the server's own page: %d %s", code, body)
	}
}

// The Host allow-list takes the names that are this server's and nothing
// that merely looks like one: no name that ends in "localhost" without the
// dot, contains it, or extends an allowed name; upper case and a trailing
// dot are the same name; IPv6 loopback in its forms is loopback, other
// IPv6 addresses are not.
func TestHostAllowListLookAlikes(t *testing.T) {
	srv, err := New(Options{ListenAddr: "lab.internal:8080", AllowHosts: []string{"Fwlab.Example"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "LocalHost": true, "localhost.": true, "localhost.:8080": true,
		"app.localhost": true, "APP.LOCALHOST.": true, "lab.internal": true, "LAB.INTERNAL.:8080": true, "FWLAB.EXAMPLE": true,
		"127.0.0.1": true, "127.1.2.3:80": true, "[::1]": true, "[::1]:8080": true, "::1": true,
		"[0:0:0:0:0:0:0:1]:80": true, "[::ffff:127.0.0.1]:80": true,

		"evillocalhost": false, "evillocalhost:8080": false, "x.localhost.evil": false, "localhost.evil": false,
		"localhost.evil.example": false, "localhostx": false, "xlocalhost.": false, "localhost..": false, ".localhost": false,
		"lab.internal.evil": false, "evil-lab.internal": false, "xlab.internal": false, "fwlab.example.evil": false, "sub.fwlab.example": false,
		"127.0.0.1.evil.example": false, "2130706433": false, "0x7f000001": false, "0177.0.0.1": false,
		"[::ffff:10.1.2.3]:80": false, "[fe80::1]": false, "[fe80::1%25lo]:80": false, "[::]": false, "[2001:db8::1]:80": false,
		"": false, ":8080": false, "[]": false, "evil.example": false, "10.1.2.3": false,
	} {
		if got := srv.hostAllowed(host); got != want {
			t.Errorf("host %q allowed %v, want %v", host, got, want)
		}
	}
}
