package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/sim"
)

// The token endpoint: the authorization code grant with PKCE, refresh with
// rotation, and the families of tokens each code begins.

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
	t         *tenant // the tenant that holds it (tenants.go)
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
	delete(f.t.families, f)
	s.unhold(f.t, f.clientID)
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

// token is the token endpoint: the authorization code and refresh token
// grants; form is the error of reading its form (readForm).
func (s *Server) token(w *edge.Writer, r *http.Request, root string, form error) {
	if form != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The body must be a form (application/x-www-form-urlencoded): "+form.Error()+".")
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
		// The code is used, and its line begins at once: its client is
		// held by the line before the code lets it go.
		g.used = true
		f = &family{clientID: c.ID, workspace: g.workspace, scopes: g.scopes, resources: g.resources, t: g.t,
			ends: now.Add(AccessTokenLifetime)}
		g.family = f
		ended = s.begin(f)
		s.settle(g)
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
		s.mu.Lock()
		s.drop(f) // no token was issued in it
		s.mu.Unlock()
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
	f.t.due(f.ends)
	s.mu.Unlock()
	if err := s.revokeAll(superseded); err != nil {
		edge.WriteError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	edge.WriteJSON(w, http.StatusOK, out)
}

// verifierMatches checks a PKCE verifier against its S256 challenge.
func verifierMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}
