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
// until they expire on the simulated clock or are revoked. The
// registered clients, the codes and the refresh tokens live in memory:
// a restarted server has forgotten them, and clients register again.
package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/front"
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
	AccessTokenLifetime = time.Hour
	CodeLifetime        = 10 * time.Minute
)

// Scopes are the scopes a client may ask for.
var Scopes = []string{"read", "generate", "publish"}

// maxClients bounds the registrations a server keeps; the oldest goes first.
const maxClients = 1024

// maxGrants bounds the codes and the refresh tokens a server keeps, each:
// past it, one it holds is forgotten to make room (on the manual clock a
// code never expires by itself).
const maxGrants = 10000

// keep stores g under key in m, within maxGrants. Requires s.mu.
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
	env *front.Env
	// Approve, when not zero, approves every authorization request at
	// once for that workspace, without the consent page.
	Approve uint64

	mu      sync.Mutex
	clients map[string]*client
	order   []string          // client ids, oldest first
	codes   map[string]*grant // authorization codes
	refresh map[string]*grant // refresh tokens
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
}

// grant is what an authorization code or a refresh token stands for.
type grant struct {
	clientID    string
	redirectURI string
	challenge   string
	workspace   uint64
	scopes      []string
	// resources are the protected resources the grant's tokens are bound
	// to ("/mcp", "/api/v1"); empty: every one.
	resources []string
	expires   time.Time // codes only
	used      bool      // codes only
	tokens    []string  // access tokens issued from it
}

// New returns the authorization server of env's simulation.
func New(env *front.Env) *Server {
	return &Server{env: env, clients: map[string]*client{}, codes: map[string]*grant{}, refresh: map[string]*grant{}}
}

// Serve serves a request of the authorization server.
func (s *Server) Serve(w *front.Writer, r *http.Request) {
	if err := s.env.Guard(r, "the authorization server"); err != nil {
		front.WriteError(w, err)
		return
	}
	root := s.env.View(r).Base
	p := r.URL.Path
	switch {
	case p == ResourceMetadataPath || strings.HasPrefix(p, ResourceMetadataPath+"/"):
		s.resourceMetadata(w, r, root, strings.TrimPrefix(p, ResourceMetadataPath))
	case p == ServerMetadataPath || p == "/.well-known/openid-configuration":
		if only(w, r, http.MethodGet) {
			front.WriteJSON(w, http.StatusOK, s.serverMetadata(root))
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

func (s *Server) resourceMetadata(w *front.Writer, r *http.Request, root, path string) {
	if !only(w, r, http.MethodGet) {
		return
	}
	resource := root + path
	if !resourceAllowed(root, resource) {
		oauthError(w, http.StatusNotFound, "invalid_request", "No protected resource at "+path+": the resources are /mcp and /api/v1.")
		return
	}
	front.WriteJSON(w, http.StatusOK, map[string]any{
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
		"issuer":                                     root,
		"authorization_endpoint":                     root + AuthorizePath,
		"token_endpoint":                             root + TokenPath,
		"registration_endpoint":                      root + RegisterPath,
		"revocation_endpoint":                        root + RevokePath,
		"scopes_supported":                           Scopes,
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":           []string{"S256"},
		"token_endpoint_auth_methods_supported":      []string{"none", "client_secret_post", "client_secret_basic"},
		"revocation_endpoint_auth_methods_supported": []string{"none", "client_secret_post", "client_secret_basic"},
	}
}

// register is dynamic client registration (RFC 7591).
func (s *Server) register(w *front.Writer, r *http.Request) {
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
		GrantTypes: in.GrantTypes, Responses: in.Responses, AuthMethod: in.AuthMethod, Scope: in.Scope}
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
	s.order = append(s.order, c.ID)
	if len(s.order) > maxClients {
		delete(s.clients, s.order[0])
		s.order = s.order[1:]
	}
	s.mu.Unlock()
	front.WriteJSON(w, http.StatusCreated, c)
}

// checkRedirectURI says what is wrong with a redirect URI ("" if nothing):
// an absolute URI without a fragment, https or a loopback http one (a
// native client's), or a private scheme of a native app.
func checkRedirectURI(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs():
		return "is not an absolute URI"
	case u.Fragment != "":
		return "has a fragment"
	case u.Scheme == "http":
		h := u.Hostname()
		if h != "localhost" && h != "127.0.0.1" && h != "::1" && !strings.HasSuffix(h, ".localhost") {
			return "uses http on a host that is not loopback (use https)"
		}
	case u.Scheme == "javascript" || u.Scheme == "data" || u.Scheme == "file":
		return "uses a scheme that cannot receive a code"
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
func (s *Server) token(w *front.Writer, r *http.Request, root string) {
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
func (s *Server) authenticateClient(w *front.Writer, r *http.Request) (*client, bool) {
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

func (s *Server) exchangeCode(w *front.Writer, r *http.Request, c *client) {
	code, verifier := r.PostForm.Get("code"), r.PostForm.Get("code_verifier")
	if code == "" || verifier == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "code and code_verifier are required.")
		return
	}
	now := s.env.Eng.Clock().Now()
	s.mu.Lock()
	g := s.codes[code]
	var reused []string
	var problem string
	switch {
	case g == nil:
		problem = "The authorization code is unknown."
	case g.clientID != c.ID:
		problem = "The authorization code was issued to another client."
	case g.used:
		problem = "The authorization code was used already: the tokens issued with it are revoked."
		reused, g.tokens = g.tokens, nil
	case !now.Before(g.expires):
		problem = "The authorization code has expired."
	case g.redirectURI != "" && r.PostForm.Get("redirect_uri") != g.redirectURI:
		problem = "redirect_uri differs from the authorization request's."
	case !verifierMatches(verifier, g.challenge):
		problem = "The code_verifier does not match the code_challenge (S256)."
	}
	if problem == "" {
		g.used = true
	}
	s.mu.Unlock()
	for _, tok := range reused {
		_, _ = s.env.Eng.RevokeToken(tok)
	}
	if problem != "" {
		oauthError(w, http.StatusBadRequest, "invalid_grant", problem)
		return
	}
	res, ok := narrow(w, r, g.resources)
	if !ok {
		return
	}
	s.issue(w, c, g, &grant{clientID: c.ID, workspace: g.workspace, scopes: g.scopes, resources: g.resources}, g, res)
}

// audienceKey carries, in a token request's context, the resources it asks
// for (audience).
type audienceKey struct{}

// narrow is the audience of the token a request asks for within what the
// grant allows (RFC 8707, 2.2): the resources it names, else the grant's;
// one the grant does not allow is invalid_target.
func narrow(w *front.Writer, r *http.Request, granted []string) ([]string, bool) {
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

func (s *Server) refreshToken(w *front.Writer, r *http.Request, c *client) {
	rt := r.PostForm.Get("refresh_token")
	s.mu.Lock()
	g := s.refresh[rt]
	if g != nil && g.clientID == c.ID {
		delete(s.refresh, rt) // rotated: a refresh token is used once
	}
	s.mu.Unlock()
	switch {
	case rt == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "refresh_token is required.")
		return
	case g == nil || g.clientID != c.ID:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The refresh token is unknown, revoked, used already or another client's.")
		return
	}
	scopes := g.scopes
	if want := strings.Fields(r.PostForm.Get("scope")); len(want) > 0 {
		for _, sc := range want {
			if !slices.Contains(g.scopes, sc) {
				oauthError(w, http.StatusBadRequest, "invalid_scope", "A refresh may narrow the scopes granted ("+strings.Join(g.scopes, " ")+"), not add "+strconv.Quote(sc)+".")
				return
			}
		}
		scopes = want
	}
	res, ok := narrow(w, r, g.resources)
	if !ok {
		return
	}
	s.issue(w, c, g, &grant{clientID: c.ID, workspace: g.workspace, scopes: g.scopes, resources: g.resources, tokens: g.tokens}, nil, res, scopes...)
}

// issue makes an access token (and a refresh token standing for next) for
// a grant and answers with them; code, when not nil, is the code the
// grant came from, which remembers the token.
func (s *Server) issue(w *front.Writer, c *client, from, next *grant, code *grant, resources []string, scopes ...string) {
	if len(scopes) == 0 {
		scopes = from.scopes
	}
	eng := s.env.Eng
	if _, err := eng.PurgeExpiredTokens(from.workspace); err != nil {
		front.WriteError(w, err)
		return
	}
	expires := eng.Clock().Now().Add(AccessTokenLifetime)
	name := "OAuth: " + c.ID
	if c.Name != "" {
		name = "OAuth: " + c.Name
	}
	tok, err := eng.AddToken(from.workspace, sim.TokenSpec{Type: "oauth", Name: name, Scopes: scopes, ExpiresAt: expires.Unix(), Resources: resources})
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "The grant's workspace cannot be reached: "+sim.AsError(err).Message)
		return
	}
	next.tokens = append(next.tokens, tok.Token)
	out := map[string]any{"access_token": tok.Token, "token_type": "Bearer", "expires_in": int(AccessTokenLifetime / time.Second),
		"scope": strings.Join(scopes, " ")}
	if slices.Contains(c.GrantTypes, "refresh_token") {
		rt := "ort_" + random(24)
		s.mu.Lock()
		keep(s.refresh, rt, next)
		if code != nil {
			code.tokens = append(code.tokens, tok.Token)
		}
		s.mu.Unlock()
		out["refresh_token"] = rt
	} else if code != nil {
		s.mu.Lock()
		code.tokens = append(code.tokens, tok.Token)
		s.mu.Unlock()
	}
	w.Header().Set("Cache-Control", "no-store")
	front.WriteJSON(w, http.StatusOK, out)
}

// revoke is token revocation (RFC 7009): an access or refresh token of the
// client ends; revoking a refresh token also ends the access tokens issued
// with it. The answer is 200 whether or not the token was known.
func (s *Server) revoke(w *front.Writer, r *http.Request) {
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
	if g := s.refresh[tok]; g != nil && g.clientID == c.ID {
		delete(s.refresh, tok)
		ended = g.tokens
	} else if s.issuedTo(c.ID, tok) {
		ended = []string{tok}
	}
	s.mu.Unlock()
	for _, t := range ended {
		if _, err := s.env.Eng.RevokeToken(t); err != nil {
			front.WriteError(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// issuedTo reports whether access token tok was issued to client id.
// Requires s.mu.
func (s *Server) issuedTo(id, tok string) bool {
	for _, g := range s.refresh {
		if g.clientID == id && slices.Contains(g.tokens, tok) {
			return true
		}
	}
	for _, g := range s.codes {
		if g.clientID == id && slices.Contains(g.tokens, tok) {
			return true
		}
	}
	return false
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

func only(w *front.Writer, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	oauthError(w, http.StatusMethodNotAllowed, "invalid_request", r.Method+" is not allowed here; use "+method+".")
	return false
}

// oauthError answers with an error of RFC 6749 (section 5.2): the
// authorization server speaks OAuth's error format, not the API's.
func oauthError(w *front.Writer, status int, code, description string) {
	w.Header().Set("Cache-Control", "no-store")
	front.WriteJSON(w, status, map[string]string{"error": code, "error_description": description})
}

// repeated names the first parameter given more than once, "" when none:
// RFC 6749 (3.1, 3.2) says a parameter MUST NOT be repeated, at every
// endpoint of the authorization server. resource may be (RFC 8707, 2).
func repeated(v url.Values) string {
	var names []string
	for name, values := range v {
		if len(values) > 1 && name != "resource" {
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
func once(w *front.Writer, r *http.Request) bool {
	for _, v := range []url.Values{r.PostForm, r.URL.Query()} {
		if name := repeated(v); name != "" {
			oauthError(w, http.StatusBadRequest, "invalid_request", name+" is given more than once (RFC 6749, 3.2).")
			return false
		}
	}
	return true
}
