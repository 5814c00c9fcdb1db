// Package oauth is the service's authorization server, as MCP clients
// expect to find it (the MCP authorization specification): protected
// resource metadata (RFC 9728) for the MCP server and the REST API,
// authorization server metadata (RFC 8414), dynamic client registration
// (RFC 7591), the authorization code grant with PKCE (S256 only) and
// resource indicators (RFC 8707), refresh with rotation, and revocation
// (RFC 7009).
//
// The access tokens it issues are OAuth tokens of the simulation
// (oat_...): REST and MCP accept them alike, with the scopes granted,
// until they expire on the simulated clock or are revoked. Every secret it
// makes (client secrets, codes, access and refresh tokens) comes from
// crypto/rand, never from the seed. The registered clients, the codes and
// the refresh tokens live in memory: a restarted server has forgotten
// them, and clients register again.
//
// The lifecycle follows OAuth 2.1 and the security BCP (RFC 9700): a code
// presented twice revokes every token issued from it (access and
// refresh); a refresh token rotates, and a rotated-out one presented again
// revokes its whole family; a refresh supersedes the family's access token
// (revoked); a client's registered scope bounds what it may ask. Expired
// and superseded tokens are purged at every request of the authorization
// server, whatever the clock's mode. Registrations are bounded per client
// address (the oldest client that holds nothing live goes first), and
// /oauth/* is rate limited per client address (RateLimit).
package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/sim"
)

// The paths of the authorization server and of its metadata.
const (
	ResourceMetadataPath = "/.well-known/oauth-protected-resource"
	ServerMetadataPath   = "/.well-known/oauth-authorization-server"
	RegisterPath         = "/oauth/register"
	AuthorizePath        = "/oauth/authorize"
	TokenPath            = "/oauth/token"
	RevokePath           = "/oauth/revoke"
)

// Lifetimes, on the simulated clock.
const (
	AccessTokenLifetime  = time.Hour
	CodeLifetime         = 10 * time.Minute
	RefreshTokenLifetime = 30 * 24 * time.Hour
)

// RateLimit is how many requests one client address may send to /oauth/*
// in a minute of wall time; past it the answer is 429 rate_limited with
// Retry-After. It is generous: a test suite's clients never meet it.
const RateLimit = 600

// Scopes are the scopes a client may ask for.
var Scopes = []string{"read", "generate", "publish"}

// maxClients bounds the registrations a server keeps, and
// maxClientsPerAddress those made from one client address: past either,
// the oldest client that holds nothing live (no code pending, no token
// alive) is forgotten; when every one does, the registration is refused.
const (
	maxClients           = 1024
	maxClientsPerAddress = 256
)

// maxGrants bounds the codes and the token families a server keeps, each:
// past it, one it holds is forgotten to make room (a forgotten family's
// tokens are revoked).
const maxGrants = 10000

// keep stores a code's grant under key in m, within maxGrants. Requires s.mu.
func keep(m map[string]*grant, key string, g *grant) {
	if len(m) >= maxGrants {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[key] = g
}

// Serves reports whether a request is the authorization server's.
func Serves(r *http.Request) bool {
	p := r.URL.Path
	return strings.HasPrefix(p, "/oauth/") || p == ServerMetadataPath ||
		p == ResourceMetadataPath || strings.HasPrefix(p, ResourceMetadataPath+"/") ||
		p == "/.well-known/openid-configuration"
}

// Server is the authorization server of one simulation.
type Server struct {
	env *edge.Env
	// Approve, when not zero, approves every authorization request at
	// once for that workspace, without the consent page: the operator's
	// approval, given when the server started (--oauth-approve).
	Approve uint64
	// RateLimit caps the requests per client address and minute to
	// /oauth/*; 0 means the package's RateLimit.
	RateLimit int

	mu       sync.Mutex
	clients  map[string]*client
	order    []string           // client ids, oldest first
	codes    map[string]*grant  // authorization codes
	refresh  map[string]*family // live refresh tokens
	spent    map[string]*family // rotated-out refresh tokens: presented again, they end their family
	access   map[string]*family // live access tokens
	families map[*family]uint64 // live families, by the order they began
	began    uint64             // families begun so far
	windows  map[string]*window // rate windows by client address
}

// window counts one client address's requests in a minute of wall time.
type window struct {
	start time.Time
	n     int
}

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

	addr string // the client address it was registered from
}

// grant is what an authorization code stands for.
type grant struct {
	clientID    string
	redirectURI string
	challenge   string
	workspace   uint64
	scopes      []string
	// resources are the protected resources the grant's tokens are bound
	// to ("/mcp", "/api/v1"); empty: every one.
	resources []string
	expires   time.Time
	used      bool
	family    *family // the tokens issued from it, once exchanged
}

// family is the line of tokens one authorization code began: its live
// refresh token, the refresh tokens it rotated out, its live access
// tokens. Ending it revokes them all.
type family struct {
	clientID  string
	workspace uint64
	scopes    []string
	resources []string
	refresh   string    // "" when none lives
	spent     []string  // rotated out
	access    []string  // live access tokens
	ends      time.Time // when nothing of it can serve any more
	dead      bool
}

// New returns the authorization server of env's simulation.
func New(env *edge.Env) *Server {
	return &Server{env: env, clients: map[string]*client{}, codes: map[string]*grant{}, refresh: map[string]*family{},
		spent: map[string]*family{}, access: map[string]*family{}, families: map[*family]uint64{}, windows: map[string]*window{}}
}

// drop ends a family: its tokens are forgotten, and the access tokens it
// returns are to revoke (revokeAll). Requires s.mu.
func (s *Server) drop(f *family) []string {
	if f == nil || f.dead {
		return nil
	}
	f.dead = true
	delete(s.refresh, f.refresh)
	for _, rt := range f.spent {
		delete(s.spent, rt)
	}
	for _, at := range f.access {
		delete(s.access, at)
	}
	delete(s.families, f)
	out := f.access
	f.refresh, f.spent, f.access = "", nil, nil
	return out
}

// revokeAll revokes access tokens in the simulation.
func (s *Server) revokeAll(tokens []string) error {
	for _, t := range tokens {
		if _, err := s.env.Eng.RevokeToken(t); err != nil {
			return err
		}
	}
	return nil
}

// purge forgets what can serve no more: codes past their life (a used one
// is kept a while longer, to catch its replay), families past their end,
// stale rate windows. Requires s.mu.
func (s *Server) purge(now time.Time) {
	for k, g := range s.codes {
		if now.After(g.expires.Add(CodeLifetime)) {
			delete(s.codes, k)
		}
	}
	for f := range s.families {
		if !now.Before(f.ends) {
			s.drop(f) // its access tokens have expired: the simulation purges them
		}
	}
	if len(s.windows) > 4*maxClients {
		wall := s.wall()
		for k, w := range s.windows {
			if wall.Sub(w.start) >= time.Minute {
				delete(s.windows, k)
			}
		}
	}
}

// inUse are the clients holding something live: a code not yet used and
// not expired, or a family. Requires s.mu.
func (s *Server) inUse(now time.Time) map[string]bool {
	out := map[string]bool{}
	for _, g := range s.codes {
		if !g.used && now.Before(g.expires) {
			out[g.clientID] = true
		}
	}
	for f := range s.families {
		out[f.clientID] = true
	}
	return out
}

// evictUnused forgets the oldest client (of addr, or of any address when
// addr is "") that holds nothing live; it reports whether there was one.
// Requires s.mu.
func (s *Server) evictUnused(addr string, used map[string]bool) bool {
	for i, id := range s.order {
		c := s.clients[id]
		if c == nil || (addr != "" && c.addr != addr) || used[id] {
			continue
		}
		delete(s.clients, id)
		s.order = slices.Delete(s.order, i, i+1)
		return true
	}
	return false
}

func (s *Server) wall() time.Time {
	if s.env.WallClock != nil {
		return s.env.WallClock()
	}
	return time.Now()
}

// clientAddr is the address a request came from, without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// admit counts a request of /oauth/* against its address's window; past
// the limit it answers 429 and reports false.
func (s *Server) admit(w *edge.Writer, r *http.Request) bool {
	limit := s.RateLimit
	if limit <= 0 {
		limit = RateLimit
	}
	addr, now := clientAddr(r), s.wall()
	s.mu.Lock()
	win := s.windows[addr]
	if win == nil || now.Sub(win.start) >= time.Minute || now.Before(win.start) {
		win = &window{start: now}
		s.windows[addr] = win
	}
	win.n++
	over, retry := win.n > limit, win.start.Add(time.Minute).Sub(now)
	s.mu.Unlock()
	if !over {
		return true
	}
	tooMany(w, retry, "Too many requests to the authorization server from "+addr+": "+strconv.Itoa(limit)+" a minute at most.")
	return false
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

// Serve serves a request of the authorization server.
func (s *Server) Serve(w *edge.Writer, r *http.Request) {
	if err := s.env.Guard(r, "the authorization server"); err != nil {
		edge.WriteError(w, err)
		return
	}
	root := s.env.View(r).Base
	p := r.URL.Path
	if strings.HasPrefix(p, "/oauth/") {
		if !s.admit(w, r) {
			return
		}
		s.mu.Lock()
		s.purge(s.env.Eng.Clock().Now())
		s.mu.Unlock()
		if _, err := s.env.Eng.PurgeAllExpiredTokens(); err != nil {
			edge.WriteError(w, err)
			return
		}
	}
	switch {
	case p == ResourceMetadataPath || strings.HasPrefix(p, ResourceMetadataPath+"/"):
		s.resourceMetadata(w, r, root, strings.TrimPrefix(p, ResourceMetadataPath))
	case p == ServerMetadataPath || p == "/.well-known/openid-configuration":
		if only(w, r, http.MethodGet) {
			edge.WriteJSON(w, http.StatusOK, s.serverMetadata(root))
		}
	case p == RegisterPath:
		if only(w, r, http.MethodPost) {
			s.register(w, r)
		}
	case p == AuthorizePath:
		s.authorize(w, r, root)
	case p == TokenPath:
		if only(w, r, http.MethodPost) {
			s.token(w, r, root)
		}
	case p == RevokePath:
		if only(w, r, http.MethodPost) {
			s.revoke(w, r)
		}
	default:
		oauthError(w, http.StatusNotFound, "invalid_request", "No such endpoint of the authorization server: "+p+".")
	}
}

// Resources are the protected resources of the server, by their path:
// the MCP server and the REST API; the root names the whole service.
func resources(root string) []string {
	return []string{root + "/mcp", root + "/api/v1", root}
}

// audience is what a token issued for resource indicators reaches: the
// paths of the protected resources they name ("/mcp", "/api/v1"), or nil
// for every one (no indicator, the root, or both resources). ok is false
// when one is not this server's.
func audience(root string, indicators []string) (paths []string, bad string) {
	for _, r := range indicators {
		if !resourceAllowed(root, r) {
			return nil, r
		}
		p := strings.TrimPrefix(strings.TrimSuffix(r, "/"), root)
		if p == "" {
			return nil, "" // the whole service
		}
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == len(resources(root))-1 {
		return nil, "" // every resource: bound to none
	}
	slices.Sort(paths)
	return paths, ""
}

// within reports whether a token request's audience is one the grant
// allows: a grant bound to no resource allows any.
func within(want, granted []string) bool {
	if len(granted) == 0 {
		return true
	}
	if len(want) == 0 {
		return false
	}
	for _, p := range want {
		if !slices.Contains(granted, p) {
			return false
		}
	}
	return true
}

// resourceAllowed reports whether a resource indicator names this server.
func resourceAllowed(root, resource string) bool {
	resource = strings.TrimSuffix(resource, "/")
	return slices.Contains(resources(root), resource)
}

func (s *Server) resourceMetadata(w *edge.Writer, r *http.Request, root, path string) {
	if !only(w, r, http.MethodGet) {
		return
	}
	resource := root + path
	if !resourceAllowed(root, resource) {
		oauthError(w, http.StatusNotFound, "invalid_request", "No protected resource at "+path+": the resources are /mcp and /api/v1.")
		return
	}
	edge.WriteJSON(w, http.StatusOK, map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{root},
		"scopes_supported":         Scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Media generation service (mock)",
	})
}

// ResourceMetadataURL is the protected resource metadata of the MCP server
// at root, for the WWW-Authenticate of its 401s.
func ResourceMetadataURL(root string) string { return root + ResourceMetadataPath + "/mcp" }

func (s *Server) serverMetadata(root string) map[string]any {
	return map[string]any{
		"issuer":                           root,
		"authorization_endpoint":           root + AuthorizePath,
		"token_endpoint":                   root + TokenPath,
		"registration_endpoint":            root + RegisterPath,
		"revocation_endpoint":              root + RevokePath,
		"scopes_supported":                 Scopes,
		"response_types_supported":         []string{"code"},
		"response_modes_supported":         []string{"query"},
		"grant_types_supported":            []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported": []string{"S256"},
		// The authorization response names the issuer (RFC 9207).
		"authorization_response_iss_parameter_supported": true,
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_post", "client_secret_basic"},
		"revocation_endpoint_auth_methods_supported":     []string{"none", "client_secret_post", "client_secret_basic"},
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
	used := s.inUse(s.env.Eng.Clock().Now())
	from := 0
	for _, o := range s.clients {
		if o.addr == c.addr {
			from++
		}
	}
	full := (from >= maxClientsPerAddress && !s.evictUnused(c.addr, used)) ||
		(len(s.clients) >= maxClients && !s.evictUnused("", used))
	if !full {
		s.clients[c.ID] = c
		s.order = append(s.order, c.ID)
	}
	s.mu.Unlock()
	if full {
		tooMany(w, time.Minute, "Too many clients are registered and in use (at most "+strconv.Itoa(maxClientsPerAddress)+
			" from one address, "+strconv.Itoa(maxClients)+" in all): revoke the tokens of one you no longer use.")
		return
	}
	edge.WriteJSON(w, http.StatusCreated, c)
}

// registeredRedirect reports whether a redirect URI of an authorization
// request is one the client registered: the same, or, for a loopback one
// (127.0.0.1, [::1], localhost over http), the same but for its port: a
// native app listens on whatever port is free (RFC 8252, 7.3; OAuth 2.1).
func registeredRedirect(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	g, err := url.Parse(got)
	if err != nil || !loopbackHTTP(g) {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err == nil && loopbackHTTP(u) && u.Hostname() == g.Hostname() && u.Path == g.Path && u.RawQuery == g.RawQuery &&
			u.User == nil && g.User == nil {
			return true
		}
	}
	return false
}

// loopbackHTTP reports whether a URI is http on a loopback host.
func loopbackHTTP(u *url.URL) bool {
	h := u.Hostname()
	return strings.EqualFold(u.Scheme, "http") && (h == "127.0.0.1" || h == "::1" || h == "localhost")
}

// checkRedirectURI says what is wrong with a redirect URI ("" if nothing):
// an absolute URI without a fragment, https, a loopback http one (a
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
	case u.Fragment != "":
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

// token is the token endpoint: the authorization code and refresh token
// grants.
func (s *Server) token(w *edge.Writer, r *http.Request, root string) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The body must be a form (application/x-www-form-urlencoded): "+err.Error()+".")
		return
	}
	if !once(w, r) {
		return
	}
	c, ok := s.authenticateClient(w, r)
	if !ok {
		return
	}
	want, bad := audience(root, r.PostForm["resource"])
	if bad != "" {
		oauthError(w, http.StatusBadRequest, "invalid_target", "The resource "+strconv.Quote(bad)+" is not this server's: ask for "+root+"/mcp or "+root+"/api/v1.")
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), audienceKey{}, want))
	switch gt := r.PostForm.Get("grant_type"); gt {
	case "authorization_code":
		s.exchangeCode(w, r, c)
	case "refresh_token":
		s.refreshToken(w, r, c)
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required.")
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "The grant types are authorization_code and refresh_token, not "+strconv.Quote(gt)+".")
	}
}

// authenticateClient identifies the client of a token or revocation
// request by its registered method; it answers the request when it fails.
func (s *Server) authenticateClient(w *edge.Writer, r *http.Request) (*client, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c := s.clients[id]
	s.mu.Unlock()
	fail := func(msg string) (*client, bool) {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="oauth"`)
		}
		oauthError(w, http.StatusUnauthorized, "invalid_client", msg)
		return nil, false
	}
	switch {
	case id == "":
		return fail("The client is not identified: send client_id (and its secret, if it has one).")
	case c == nil:
		return fail("Unknown client " + strconv.Quote(id) + ": register it at " + RegisterPath + " (a restarted server has forgotten its clients).")
	case c.Secret == "":
		return c, true
	case subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1:
		return fail("The client secret is wrong.")
	}
	return c, true
}

func (s *Server) exchangeCode(w *edge.Writer, r *http.Request, c *client) {
	code, verifier := r.PostForm.Get("code"), r.PostForm.Get("code_verifier")
	if code == "" || verifier == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "code and code_verifier are required.")
		return
	}
	now := s.env.Eng.Clock().Now()
	s.mu.Lock()
	g := s.codes[code]
	var ended []string
	var problem string
	switch {
	case g == nil:
		problem = "The authorization code is unknown."
	case g.clientID != c.ID:
		problem = "The authorization code was issued to another client."
	case g.used:
		problem = "The authorization code was used already: every token issued with it (access and refresh) is revoked."
		ended = s.drop(g.family)
	case !now.Before(g.expires):
		problem = "The authorization code has expired."
	case g.redirectURI != "" && r.PostForm.Get("redirect_uri") != g.redirectURI:
		problem = "redirect_uri differs from the authorization request's."
	case !verifierMatches(verifier, g.challenge):
		problem = "The code_verifier does not match the code_challenge (S256)."
	}
	var f *family
	if problem == "" {
		g.used = true
		f = &family{clientID: c.ID, workspace: g.workspace, scopes: g.scopes, resources: g.resources}
		g.family = f
	}
	s.mu.Unlock()
	if err := s.revokeAll(ended); err != nil {
		edge.WriteError(w, err)
		return
	}
	if problem != "" {
		oauthError(w, http.StatusBadRequest, "invalid_grant", problem)
		return
	}
	res, ok := narrow(w, r, g.resources)
	if !ok {
		return
	}
	s.issue(w, c, f, res, g.scopes, nil)
}

// audienceKey carries, in a token request's context, the resources it asks
// for (audience).
type audienceKey struct{}

// narrow is the audience of the token a request asks for within what the
// grant allows (RFC 8707, 2.2): the resources it names, else the grant's;
// one the grant does not allow is invalid_target.
func narrow(w *edge.Writer, r *http.Request, granted []string) ([]string, bool) {
	want, _ := r.Context().Value(audienceKey{}).([]string)
	if !r.PostForm.Has("resource") {
		return granted, true
	}
	if !within(want, granted) {
		oauthError(w, http.StatusBadRequest, "invalid_target", "The grant was authorized for "+strings.Join(granted, " and ")+" alone: a token for more is not issued.")
		return nil, false
	}
	return want, true
}

func (s *Server) refreshToken(w *edge.Writer, r *http.Request, c *client) {
	rt := r.PostForm.Get("refresh_token")
	if rt == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "refresh_token is required.")
		return
	}
	s.mu.Lock()
	f := s.refresh[rt]
	var ended []string
	reused := f == nil && s.spent[rt] != nil && s.spent[rt].clientID == c.ID
	if reused {
		// A rotated-out refresh token presented again: stolen, or the
		// client lost track. Either way its family ends (RFC 9700, 4.14.2).
		ended = s.drop(s.spent[rt])
	}
	var granted, resources []string
	if f != nil && f.clientID == c.ID {
		granted, resources = f.scopes, f.resources
	}
	s.mu.Unlock()
	if err := s.revokeAll(ended); err != nil {
		edge.WriteError(w, err)
		return
	}
	switch {
	case reused:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The refresh token was used already (rotated out): every token of its line is revoked; authorize again.")
		return
	case f == nil || f.clientID != c.ID:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The refresh token is unknown, revoked, expired or another client's.")
		return
	}
	scopes := granted
	if want := strings.Fields(r.PostForm.Get("scope")); len(want) > 0 {
		for _, sc := range want {
			if !slices.Contains(granted, sc) {
				oauthError(w, http.StatusBadRequest, "invalid_scope", "A refresh may narrow the scopes granted ("+strings.Join(granted, " ")+"), not add "+strconv.Quote(sc)+".")
				return
			}
		}
		scopes = want
	}
	res, ok := narrow(w, r, resources)
	if !ok {
		return
	}
	// Rotate: the token is used once; the family's access tokens are
	// superseded by the one issued now.
	s.mu.Lock()
	if f.dead || f.refresh != rt {
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The refresh token was used or revoked meanwhile.")
		return
	}
	delete(s.refresh, rt)
	f.refresh = ""
	f.spent = append(f.spent, rt)
	s.spent[rt] = f
	superseded := f.access
	f.access = nil
	for _, at := range superseded {
		delete(s.access, at)
	}
	s.mu.Unlock()
	s.issue(w, c, f, res, scopes, superseded)
}

// issue makes an access token (and, for a client that refreshes, a refresh
// token) of family f and answers with them; superseded are the family's
// access tokens the new one replaces, revoked once it is issued.
func (s *Server) issue(w *edge.Writer, c *client, f *family, resources, scopes, superseded []string) {
	eng := s.env.Eng
	now := eng.Clock().Now()
	expires := now.Add(AccessTokenLifetime)
	name := "OAuth: " + c.ID
	if c.Name != "" {
		name = "OAuth: " + c.Name
	}
	tok, err := eng.AddToken(f.workspace, sim.TokenSpec{Type: "oauth", Name: name, Scopes: scopes, ExpiresAt: expires.Unix(), Resources: resources})
	if err != nil {
		s.mu.Lock()
		ended := s.drop(f)
		s.mu.Unlock()
		_ = s.revokeAll(append(ended, superseded...))
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The grant's workspace cannot be reached: "+sim.AsError(err).Message)
		return
	}
	out := map[string]any{"access_token": tok.Token, "token_type": "Bearer", "expires_in": int(AccessTokenLifetime / time.Second),
		"scope": strings.Join(scopes, " ")}
	var ended []string
	s.mu.Lock()
	if f.dead {
		// Its code was replayed, or it was revoked, while this was issued.
		s.mu.Unlock()
		_ = s.revokeAll(append([]string{tok.Token}, superseded...))
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The grant was revoked while the token was issued.")
		return
	}
	f.access = append(f.access, tok.Token)
	s.access[tok.Token] = f
	f.ends = expires
	if slices.Contains(c.GrantTypes, "refresh_token") {
		rt := "ort_" + random(24)
		f.refresh = rt
		s.refresh[rt] = f
		f.ends = now.Add(RefreshTokenLifetime)
		out["refresh_token"] = rt
	}
	if _, ok := s.families[f]; !ok {
		if len(s.families) >= maxGrants {
			ended = s.drop(s.oldestFamily())
		}
		s.began++
		s.families[f] = s.began
	}
	s.mu.Unlock()
	if err := s.revokeAll(append(ended, superseded...)); err != nil {
		edge.WriteError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	edge.WriteJSON(w, http.StatusOK, out)
}

// oldestFamily is the family that began first. Requires s.mu.
func (s *Server) oldestFamily() *family {
	var out *family
	first := uint64(0)
	for f, n := range s.families {
		if out == nil || n < first {
			out, first = f, n
		}
	}
	return out
}

// revoke is token revocation (RFC 7009): an access or refresh token of the
// client ends; revoking a refresh token (live or rotated out) ends its
// whole family, access tokens included. The answer is 200 whether or not
// the token was known.
func (s *Server) revoke(w *edge.Writer, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The body must be a form: "+err.Error()+".")
		return
	}
	if !once(w, r) {
		return
	}
	c, ok := s.authenticateClient(w, r)
	if !ok {
		return
	}
	tok := r.PostForm.Get("token")
	if tok == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "token is required.")
		return
	}
	var ended []string
	s.mu.Lock()
	if f := s.refresh[tok]; f != nil && f.clientID == c.ID {
		ended = s.drop(f)
	} else if f := s.spent[tok]; f != nil && f.clientID == c.ID {
		ended = s.drop(f)
	} else if f := s.access[tok]; f != nil && f.clientID == c.ID {
		f.access = slices.DeleteFunc(f.access, func(t string) bool { return t == tok })
		delete(s.access, tok)
		ended = []string{tok}
	}
	s.mu.Unlock()
	if err := s.revokeAll(ended); err != nil {
		edge.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// verifierMatches checks a PKCE verifier against its S256 challenge.
func verifierMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// random is n random bytes in hex: the secrets of the authorization
// server (client secrets, codes, refresh tokens) are not derived from the
// seed, so that no one can work them out from it.
func random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

func only(w *edge.Writer, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	oauthError(w, http.StatusMethodNotAllowed, "invalid_request", r.Method+" is not allowed here; use "+method+".")
	return false
}

// oauthError answers with an error of RFC 6749 (section 5.2): the
// authorization server speaks OAuth's error format, not the API's.
func oauthError(w *edge.Writer, status int, code, description string) {
	w.Header().Set("Cache-Control", "no-store")
	edge.WriteJSON(w, status, map[string]string{"error": code, "error_description": description})
}

// repeated names the first parameter given more than once, "" when none:
// RFC 6749 (3.1, 3.2) says a parameter MUST NOT be repeated, at every
// endpoint of the authorization server. resource may be (RFC 8707, 2), and
// so may grant, the consent page's own field (one per scope granted).
func repeated(v url.Values) string {
	var names []string
	for name, values := range v {
		if len(values) > 1 && name != "resource" && name != "grant" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[0]
}

// once refuses a form request that repeats a parameter, in its body or its
// query, with 400 invalid_request; it reports whether the request may go on.
func once(w *edge.Writer, r *http.Request) bool {
	for _, v := range []url.Values{r.PostForm, r.URL.Query()} {
		if name := repeated(v); name != "" {
			oauthError(w, http.StatusBadRequest, "invalid_request", name+" is given more than once (RFC 6749, 3.2).")
			return false
		}
	}
	return true
}
