package server

import (
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ContentSecurityPolicy is sent with every response: scripts and
// connections only from this server, no inline script, no framing. Style
// attributes set by the page's script (and its chart library) are allowed;
// style sheets come from this server.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// MaxErrorBody bounds the body of every error response.
const MaxErrorBody = 4 << 10

// guard wraps the router with what every request goes through, in order:
// the security headers (on every page, asset and answer), the Host
// allow-list against DNS rebinding (403), the standard library's
// cross-origin protection on state-changing requests (403), and the JSON
// rule of the API: a POST with a body other than an upload must declare
// Content-Type: application/json (415).
func (s *Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, "", "cross-origin request refused: state-changing requests must come from this server's own pages")
	}))
	inner := cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodPost || r.Method == http.MethodPatch) && strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/api/uploads" {
			if ct := r.Header.Get("Content-Type"); ct != "" || r.ContentLength > 0 || len(r.TransferEncoding) > 0 {
				if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
					writeError(w, http.StatusUnsupportedMediaType, "", "the request body must be JSON sent with Content-Type: application/json, got "+quote(ct))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !s.hostAllowed(r.Host) {
			writeError(w, http.StatusForbidden, "", "host "+quote(r.Host)+" is not served: use the address the server listens on, localhost, or a name given with -allow-host")
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether the Host header names this server: localhost
// (and names below .localhost), a loopback address, the listen address's
// host, any IP address when the server listens on every interface, or a
// name in Options.AllowHosts. The port is not compared.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if host == "localhost" || (strings.HasSuffix(host, ".localhost") && dnsName(strings.TrimSuffix(host, ".localhost"))) {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		if s.anyIP {
			return true
		}
	}
	_, ok := s.allowHosts[host]
	return ok
}

// dnsName reports whether s is a host name of non-empty labels of
// letters, digits and hyphens, dot-separated.
func dnsName(s string) bool {
	if s == "" {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// clientAddr names the client of a request for the per-client budgets: the
// IP address of its connection (no forwarding header is trusted).
func clientAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// quote quotes at most 40 characters of s, escaped.
func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:max])) + "…"
}

// clipMessage makes an error message safe to send: every Go-quoted string
// in it is cut to 40 characters (parsers quote the offending field, which
// may be megabytes of a file), invalid UTF-8 is replaced, and the whole is
// cut to fit MaxErrorBody.
func clipMessage(msg string) string {
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if msg[i] == '"' {
			if q, err := strconv.QuotedPrefix(msg[i:]); err == nil {
				if u, err := strconv.Unquote(q); err == nil && utf8.RuneCountInString(u) > 40 {
					b.WriteString(quote(u))
				} else {
					b.WriteString(q)
				}
				i += len(q)
				continue
			}
		}
		b.WriteByte(msg[i])
		i++
		if b.Len() > MaxErrorBody {
			break
		}
	}
	out := b.String()
	const room = MaxErrorBody - 512 // the JSON framing, the field and escapes
	if len(out) > room/2 {
		cut := room / 2
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "… (cut)"
	}
	return out
}
