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
// server, whatever the clock's mode.
//
// What it keeps is bounded per tenant, so that on a server shared by
// several test suites (one address, 127.0.0.1, for all) none locks out
// another: a grant's clients, codes and tokens count against its tenant,
// the sandbox it was approved for or the server itself, and a deleted
// sandbox's are freed at once (ForgetSandbox); a client not approved yet
// counts against the address it registered from, briefly. /oauth/* is
// rate limited per client address and tenant (RateLimit).
//
// A file per endpoint: metadata.go, registration.go, authorize.go (with the
// codes), token.go (with the families of tokens), revocation.go; the
// resource indicators are resources.go's, the tenants and their bounds
// tenants.go's, the rate limit ratelimit.go's, and oauth.go routes a request
// to its endpoint.
package oauth

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/gate"
)

// The paths of the authorization server and of its metadata.
const (
	ResourceMetadataPath = gate.ResourceMetadataPath
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

// Scopes are the scopes a client may ask for.
var Scopes = []string{"read", "generate", "publish"}

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
	idle     *list.List         // the clients no tenant holds, by when they went idle (registration.go)
	idleFrom map[string]int     // the idle clients of each address
	codes    map[string]*grant  // authorization codes, of every tenant
	refresh  map[string]*family // live refresh tokens
	spent    map[string]*family // rotated-out refresh tokens: presented again, they end their family
	access   map[string]*family // live access tokens
	tenants  map[uint64]*tenant // what each tenant holds, by its workspace (0: the server's own; tenants.go)
	seq      uint64             // codes, lines and approvals so far, in order
	windows  map[string]*window // rate windows (ratelimit.go)
}

// New returns the authorization server of env's simulation.
func New(env *edge.Env) *Server {
	return &Server{env: env, clients: map[string]*client{}, idle: list.New(), idleFrom: map[string]int{}, codes: map[string]*grant{},
		refresh: map[string]*family{}, spent: map[string]*family{}, access: map[string]*family{}, tenants: map[uint64]*tenant{},
		windows: map[string]*window{}}
}

// purge forgets what can serve no more: the tenants of sandboxes gone,
// each tenant's codes and families past their life (tenants.go), clients
// never approved past theirs, stale rate windows. Requires s.mu.
func (s *Server) purge(now time.Time) {
	for ws, t := range s.tenants {
		if ws != 0 {
			if _, ok := s.env.Eng.SandboxOf(ws); !ok {
				s.forgetTenant(t) // deleted meanwhile: a reset or a restore of the whole state
				continue
			}
		}
		if !now.Before(t.next) {
			s.sweep(t, now)
		}
	}
	wall := s.wall()
	s.expireUnapproved(wall)
	if len(s.windows) > 4*maxClients {
		for k, w := range s.windows {
			if wall.Sub(w.start) >= time.Minute {
				delete(s.windows, k)
			}
		}
	}
}

func (s *Server) wall() time.Time {
	if s.env.WallClock != nil {
		return s.env.WallClock()
	}
	return time.Now()
}

// Serve serves a request of the authorization server.
func (s *Server) Serve(w *edge.Writer, r *http.Request) {
	if err := s.env.Guard(r, "the authorization server"); err != nil {
		edge.WriteError(w, err)
		return
	}
	root := s.env.View(r).Base
	p := r.URL.Path
	var form error
	if strings.HasPrefix(p, "/oauth/") {
		form = readForm(w, r)
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
		s.authorize(w, r, root, form)
	case p == TokenPath:
		if only(w, r, http.MethodPost) {
			s.token(w, r, root, form)
		}
	case p == RevokePath:
		if only(w, r, http.MethodPost) {
			s.revoke(w, r, form)
		}
	default:
		oauthError(w, http.StatusNotFound, "invalid_request", "No such endpoint of the authorization server: "+p+".")
	}
}

// readForm reads the form of a POST to the authorization, token or
// revocation endpoint (64 KiB at most) before the request is admitted, so
// that the rate limit knows whose it is (ratelimit.go); the endpoint
// answers the error, if any.
func readForm(w *edge.Writer, r *http.Request) error {
	if r.Method != http.MethodPost || (r.URL.Path != AuthorizePath && r.URL.Path != TokenPath && r.URL.Path != RevokePath) {
		return nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	return r.ParseForm()
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
