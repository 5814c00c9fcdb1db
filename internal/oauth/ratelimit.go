package oauth

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
)

// The rate limit of /oauth/*, on the wall clock, per client address and
// tenant.
//
// A request that proves its tenant counts in that tenant's window at its
// address: a consent with a control token (the server's, or a sandbox's
// for that sandbox), a token or revocation request presenting a code, a
// refresh token or an access token (the tenant the grant is held by:
// tenants.go). One that proves none (a registration, the consent page, a
// made-up token) counts in its address's window; from a loopback address,
// in its connection's. On loopback the address names no one: every suite
// of the machine comes from 127.0.0.1, and one window for all would let a
// single suite's flood answer 429 to every other. Per tenant, a suite
// spends its own sandbox's minute; per connection, a client looping on one
// connection is still stopped, and no one else with it. What a flood of
// new connections could gain is bounded elsewhere: the idle clients by
// count (registration.go), a tenant's grants by its own bounds.

// RateLimit is how many requests one window (a client address, an address
// and tenant, or a loopback connection) may send to /oauth/* in a minute
// of wall time; past it the answer is 429 rate_limited with Retry-After.
// It is generous: a test suite's clients never meet it.
const RateLimit = 600

// window counts one window's requests in a minute of wall time.
type window struct {
	start time.Time
	n     int
}

// clientAddr is the address a request came from, without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// admit counts a request of /oauth/* against its window (rateKey); past
// the limit it answers 429 and reports false.
func (s *Server) admit(w *edge.Writer, r *http.Request) bool {
	limit := s.RateLimit
	if limit <= 0 {
		limit = RateLimit
	}
	key, whose := s.rateKey(r)
	now := s.wall()
	s.mu.Lock()
	win := s.windows[key]
	if win == nil || now.Sub(win.start) >= time.Minute || now.Before(win.start) {
		win = &window{start: now}
		s.windows[key] = win
	}
	win.n++
	over, retry := win.n > limit, win.start.Add(time.Minute).Sub(now)
	s.mu.Unlock()
	if !over {
		return true
	}
	tooMany(w, retry, "Too many requests to the authorization server from "+whose+": "+strconv.Itoa(limit)+" a minute at most.")
	return false
}

// rateKey names the window a request counts in, and says whose it is.
func (s *Server) rateKey(r *http.Request) (key, whose string) {
	addr := clientAddr(r)
	if ws, ok := s.requestTenant(r); ok {
		if ws == 0 {
			return addr + " server", addr + " for the server's own workspaces"
		}
		id := strconv.FormatUint(ws, 10)
		return addr + " sandbox " + id, addr + " for the sandbox of workspace " + id
	}
	if ip, err := netip.ParseAddr(addr); err == nil && ip.IsLoopback() {
		return r.RemoteAddr, r.RemoteAddr + " (this connection)"
	}
	return addr, addr
}

// requestTenant is the tenant a request proves, by the control token of a
// consent, or the code or token it presents at the token or revocation
// endpoint; ok is false when it proves none. The form was read (readForm).
func (s *Server) requestTenant(r *http.Request) (ws uint64, ok bool) {
	form := r.PostForm
	switch r.URL.Path {
	case AuthorizePath:
		credential := form.Get("credential")
		server := s.env.ControlToken
		switch {
		case credential == "":
		case server != "" && subtle.ConstantTimeCompare([]byte(credential), []byte(server)) == 1:
			return 0, true
		case strings.HasPrefix(credential, "sbc_"):
			if sb, ok := s.env.Eng.SandboxByControlToken(credential); ok {
				return sb.WorkspaceID, true
			}
		}
		return 0, false
	case TokenPath, RevokePath:
		s.mu.Lock()
		defer s.mu.Unlock()
		if g := s.codes[form.Get("code")]; g != nil && r.URL.Path == TokenPath {
			return g.t.ws, true
		}
		for _, tok := range []string{form.Get("refresh_token"), form.Get("token")} {
			for _, m := range []map[string]*family{s.refresh, s.spent, s.access} {
				if f := m[tok]; f != nil && tok != "" {
					return f.t.ws, true
				}
			}
		}
	}
	return 0, false
}

// tooMany answers 429 rate_limited, in OAuth's error format, with
// Retry-After in seconds.
func tooMany(w *edge.Writer, retry time.Duration, description string) {
	secs := int((retry + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	oauthError(w, http.StatusTooManyRequests, "rate_limited", description+" Retry after "+strconv.Itoa(secs)+" s.")
}
