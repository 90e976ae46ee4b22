package http

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tack-run/tack/events"
)

// A page in the user's browser can reach a server on loopback: by a
// cross-site request (a form, fetch with a "simple" content type), or
// by DNS rebinding (a name of the attacker's that turns into 127.0.0.1,
// which makes the page same-origin with the server). guard refuses both,
// on every route, before anything else runs: a Host outside the allowed
// names, and a state-changing request (any method but GET, HEAD and
// OPTIONS, and the WebSocket upgrade) that a browser marks as
// cross-origin, by net/http's CrossOriginProtection with the trusted
// origins (WithCORSOrigins) as its exceptions.

// guard answers 403 forbidden to a request whose Host is not allowed or
// that crosses origins without being trusted; see the comment above.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.hostAllowed(r.Host); err != nil {
			writeErrorStatus(w, http.StatusForbidden, events.CodeForbidden, err.Error())
			return
		}
		if err := s.sameOrigin(r); err != nil {
			writeErrorStatus(w, http.StatusForbidden, events.CodeForbidden, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed checks the request's Host: without an authenticator a
// loopback name (localhost, 127.x.y.z, [::1]) with any port, and, when
// allowed hosts are set, one of them.
func (s *Server) hostAllowed(hostport string) error {
	host, port := splitHost(hostport)
	if s.opts.auth == nil && !isLoopbackName(host) {
		return fmt.Errorf("host %s refused: without authentication this server answers only loopback names (localhost, 127.0.0.1, [::1])",
			strconv.QuoteToASCII(hostport))
	}
	if len(s.opts.hosts) == 0 {
		return nil
	}
	for _, h := range s.opts.hosts {
		hh, hp := splitHost(h)
		if strings.EqualFold(hh, host) && (hp == "" || hp == port) {
			return nil
		}
	}
	return fmt.Errorf("host %s refused: it is not one of the allowed hosts", strconv.QuoteToASCII(hostport))
}

// splitHost splits a Host header (or an allowed host) into its name —
// without the brackets of an IPv6 address — and its port, "" when it
// has none.
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// isLoopbackName reports whether host names this machine's loopback
// interface: localhost, 127.x.y.z or ::1.
func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin applies the cross-origin rule. A WebSocket upgrade is a GET
// that net/http's rule lets through, yet it opens a channel that runs
// commands: it is checked as a POST would be.
func (s *Server) sameOrigin(r *http.Request) error {
	if isUpgrade(r) {
		r = r.WithContext(r.Context()) // a shallow copy, whose method may change
		r.Method = http.MethodPost
	}
	if s.anyOrigin || s.crossOrigin.Check(r) == nil {
		return nil
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		origin = "(Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
	}
	return fmt.Errorf("cross-origin request from %s refused: that origin is not trusted", strconv.QuoteToASCII(origin))
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "websocket") {
				return true
			}
		}
	}
	return false
}

// CheckOrigins checks a list of trusted origins (WithCORSOrigins): each
// is scheme://host[:port] with nothing else, or "*" for every origin,
// which only a server with authentication may trust (browsers do not
// send bearer tokens on their own; without authentication "*" would let
// every page drive the server).
func CheckOrigins(origins []string, withAuth bool) error {
	for _, o := range origins {
		if o == "*" {
			if !withAuth {
				return errors.New(`origin "*" trusts every web page, and without authentication any page could then drive every session: name the origins, or add authentication`)
			}
			continue
		}
		if err := checkOrigin(o); err != nil {
			return err
		}
	}
	return nil
}

// checkOrigin checks one origin: scheme://host[:port].
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("origin %s is not scheme://host[:port] (such as https://app.example or http://localhost:5173)", strconv.QuoteToASCII(o))
	}
	return nil
}

// CheckAllowedHosts checks a list of allowed hosts (WithAllowedHosts):
// each a host name or IP address, with an optional port ([::1]:7700);
// without authentication only loopback names.
func CheckAllowedHosts(hosts []string, withAuth bool) error {
	for _, h := range hosts {
		host, port := splitHost(h)
		if host == "" || strings.ContainsAny(h, "/@?#\\ ") || strings.ContainsAny(host, "[]") {
			return fmt.Errorf("allowed host %s is not a host name or address with an optional port", strconv.QuoteToASCII(h))
		}
		if port != "" {
			if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
				return fmt.Errorf("allowed host %s: %q is not a port", strconv.QuoteToASCII(h), port)
			}
		}
		if !withAuth && !isLoopbackName(host) {
			return fmt.Errorf("allowed host %s is not a loopback name, and without authentication only loopback names are answered", strconv.QuoteToASCII(h))
		}
	}
	return nil
}
