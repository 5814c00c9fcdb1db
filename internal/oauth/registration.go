package oauth

import (
	"container/list"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
)

// Dynamic client registration (RFC 7591), and the bounds on the clients
// no tenant holds.

// A client a tenant holds (approved in it, with a code pending or a line
// of tokens alive there: tenants.go) counts against that tenant alone.
// Every other one is idle (not approved yet, or its grants have all
// ended) and counts against the address it registered from: at most
// maxClientsPerAddress idle clients from one address and maxClients in
// all, past which the oldest idle one is forgotten, so that a registration
// is never refused. One never approved is forgotten unapprovedLifetime
// after it registered (wall time, as the address's rate window: the
// address is shared in real time).
const (
	maxClients           = 1024
	maxClientsPerAddress = 256
	unapprovedLifetime   = 10 * time.Minute
)

// client is a registered client, as registration answers it.
type client struct {
	ID           string   `json:"client_id"`
	Secret       string   `json:"client_secret,omitempty"`
	IssuedAt     int64    `json:"client_id_issued_at"`
	SecretExpiry *int64   `json:"client_secret_expires_at,omitempty"`
	Name         string   `json:"client_name,omitempty"`
	RedirectURIs []string `json:"redirect_uris"`
	GrantTypes   []string `json:"grant_types"`
	Responses    []string `json:"response_types"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
	Scope        string   `json:"scope,omitempty"`

	addr     string        // the client address it was registered from
	tenants  int           // how many tenants hold it
	approved bool          // a tenant held it once
	idle     *list.Element // its place among the idle clients; nil while a tenant holds it
	since    time.Time     // when it registered or went idle, on the wall clock
}

// idleAdd counts a client among the idle ones, within their bounds.
// Requires s.mu.
func (s *Server) idleAdd(c *client) {
	c.since = s.wall()
	c.idle = s.idle.PushBack(c)
	s.idleFrom[c.addr]++
	if s.idleFrom[c.addr] > maxClientsPerAddress {
		for e := s.idle.Front(); e != nil; e = e.Next() {
			if o := e.Value.(*client); o.addr == c.addr {
				s.forgetClient(o)
				break
			}
		}
	}
	if s.idle.Len() > maxClients {
		s.forgetClient(s.idle.Front().Value.(*client))
	}
}

// unidle takes a client out of the idle ones. Requires s.mu.
func (s *Server) unidle(c *client) {
	if c.idle == nil {
		return
	}
	s.idle.Remove(c.idle)
	c.idle = nil
	if s.idleFrom[c.addr]--; s.idleFrom[c.addr] <= 0 {
		delete(s.idleFrom, c.addr)
	}
}

// forgetClient forgets a client. Requires s.mu.
func (s *Server) forgetClient(c *client) {
	s.unidle(c)
	if s.clients[c.ID] == c {
		delete(s.clients, c.ID)
	}
}

// expireUnapproved forgets the idle clients never approved that
// registered unapprovedLifetime ago or more. Requires s.mu.
func (s *Server) expireUnapproved(wall time.Time) {
	for e := s.idle.Front(); e != nil; {
		c, next := e.Value.(*client), e.Next()
		if wall.Sub(c.since) < unapprovedLifetime {
			return
		}
		if !c.approved {
			s.forgetClient(c)
		}
		e = next
	}
}

// register is dynamic client registration (RFC 7591).
func (s *Server) register(w *edge.Writer, r *http.Request) {
	var in struct {
		RedirectURIs []string `json:"redirect_uris"`
		Name         string   `json:"client_name"`
		GrantTypes   []string `json:"grant_types"`
		Responses    []string `json:"response_types"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		Scope        string   `json:"scope"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "The body must be a JSON object of client metadata: "+err.Error()+".")
		return
	}
	if len(in.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required: at least one URI to send the authorization code to.")
		return
	}
	for _, u := range in.RedirectURIs {
		if reason := checkRedirectURI(u); reason != "" {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "Redirect URI "+strconv.Quote(u)+" "+reason+".")
			return
		}
	}
	c := &client{ID: "mcl_" + random(12), IssuedAt: s.env.Eng.Clock().Now().Unix(), Name: in.Name, RedirectURIs: in.RedirectURIs,
		GrantTypes: in.GrantTypes, Responses: in.Responses, AuthMethod: in.AuthMethod, Scope: in.Scope, addr: clientAddr(r)}
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	if len(c.Responses) == 0 {
		c.Responses = []string{"code"}
	}
	for _, g := range c.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token, not "+strconv.Quote(g)+".")
			return
		}
	}
	if !slices.Equal(c.Responses, []string{"code"}) {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", `response_types may only be ["code"].`)
		return
	}
	switch c.AuthMethod {
	case "":
		c.AuthMethod = "client_secret_basic" // RFC 7591's default
		fallthrough
	case "client_secret_basic", "client_secret_post":
		c.Secret = "mcs_" + random(24)
		zero := int64(0)
		c.SecretExpiry = &zero
	case "none":
	default:
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method may be none, client_secret_post or client_secret_basic, not "+strconv.Quote(c.AuthMethod)+".")
		return
	}
	if bad := unknownScopes(strings.Fields(c.Scope)); bad != "" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "Unknown scope "+strconv.Quote(bad)+": the scopes are read, generate and publish.")
		return
	}
	s.mu.Lock()
	s.clients[c.ID] = c
	s.idleAdd(c)
	s.mu.Unlock()
	edge.WriteJSON(w, http.StatusCreated, c)
}

// registeredRedirect reports whether a redirect URI of an authorization
// request is one the client registered, compared as exact strings (OAuth
// 2.1, 2.3.1; RFC 9700, 4.1.3): no case folding, no percent-decoding, no
// normalization of any kind. The one exception is the port of a loopback
// URI (http on 127.0.0.1, [::1] or localhost): a native app listens on
// whatever port is free (RFC 8252, 7.3), so both sides are compared
// without their port, and exactly in every other character.
func registeredRedirect(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	g, ok := portless(got)
	if !ok {
		return false
	}
	for _, r := range registered {
		if u, ok := portless(r); ok && u == g {
			return true
		}
	}
	return false
}

// portless is a loopback redirect URI as written, but for its port
// (":51234" taken out of the authority); ok is false for any other URI, and
// for one with user information or a fragment.
func portless(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !loopbackHTTP(u) || u.User != nil || strings.Contains(raw, "#") {
		return "", false
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if port := u.Port(); port != "" {
		authority = strings.TrimSuffix(authority, ":"+port)
	}
	return scheme + "://" + authority + rest[end:], true
}

// loopbackHTTP reports whether a URI is http on a loopback host.
func loopbackHTTP(u *url.URL) bool {
	h := u.Hostname()
	return strings.EqualFold(u.Scheme, "http") && (h == "127.0.0.1" || h == "::1" || h == "localhost")
}

// checkRedirectURI says what is wrong with a redirect URI ("" if nothing):
// an absolute URI without a fragment (not even an empty one: "#" alone is
// a fragment component, RFC 6749, 3.1.2), https, a loopback http one (a
// native client's), or a private-use scheme of a native app in reverse
// domain form (com.example.app:/cb, RFC 8252, 7.1). Every other scheme
// (javascript:, data:, vbscript:, blob:, file:, ...) is refused.
func checkRedirectURI(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return "is not an absolute URI"
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case strings.Contains(raw, "#"):
		return "has a fragment"
	case scheme == "https":
		if u.Host == "" {
			return "has no host"
		}
	case scheme == "http":
		h := u.Hostname()
		if h != "localhost" && h != "127.0.0.1" && h != "::1" && !strings.HasSuffix(h, ".localhost") {
			return "uses http on a host that is not loopback (use https)"
		}
	case slices.Contains([]string{"javascript", "data", "vbscript", "blob", "file", "about", "filesystem", "view-source"}, scheme):
		return "uses a scheme that cannot receive a code"
	case !strings.Contains(scheme, "."):
		return "uses a scheme that is neither http(s) nor a private-use scheme in reverse domain form (com.example.app:/cb, RFC 8252, 7.1)"
	}
	return ""
}

func unknownScopes(scopes []string) string {
	for _, sc := range scopes {
		if !slices.Contains(Scopes, sc) {
			return sc
		}
	}
	return ""
}
