package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/simtest"
)

const (
	root     = "http://localhost"
	callback = "http://127.0.0.1:9/cb"
	verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk" // RFC 7636, appendix B
)

// challenge is the S256 challenge of verifier (RFC 7636, appendix B).
const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

// PKCE is S256 only: the verifier's SHA-256, base64url without padding.
func TestVerifierMatches(t *testing.T) {
	sum := sha256.Sum256([]byte("another verifier"))
	tests := []struct {
		name, verifier, challenge string
		want                      bool
	}{
		{"the RFC's example", verifier, challenge, true},
		{"another verifier", "another verifier", challenge, false},
		{"the plain method's challenge (the verifier itself)", verifier, verifier, false},
		{"padded base64", "another verifier", base64.URLEncoding.EncodeToString(sum[:]), false},
		{"unpadded base64url", "another verifier", base64.RawURLEncoding.EncodeToString(sum[:]), true},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, verifierMatches(tt.verifier, tt.challenge)) })
	}
}

func TestCheckRedirectURI(t *testing.T) {
	tests := []struct{ uri, reason string }{
		{"https://app.example/cb", ""},
		{"http://localhost:8080/cb", ""},
		{"http://127.0.0.1:33418/callback", ""},
		{"http://[::1]:9/cb", ""},
		{"http://agent.localhost/cb", ""},
		{"com.example.app:/oauth", ""}, // a native app's private scheme
		{"http://app.example/cb", "uses http on a host that is not loopback (use https)"},
		{"https://app.example/cb#frag", "has a fragment"},
		{"/cb", "is not an absolute URI"},
		{"://nope", "is not an absolute URI"},
		{"javascript:alert(1)", "uses a scheme that cannot receive a code"},
		{"data:text/html,hi", "uses a scheme that cannot receive a code"},
		{"file:///etc/passwd", "uses a scheme that cannot receive a code"},
		{"vbscript:msgbox(1)", "uses a scheme that cannot receive a code"},
		{"VBScript:msgbox(1)", "uses a scheme that cannot receive a code"},
		{"blob:https://app.example/0b6e", "uses a scheme that cannot receive a code"},
		{"myapp:/cb", "uses a scheme that is neither http(s) nor a private-use scheme in reverse domain form (com.example.app:/cb, RFC 8252, 7.1)"},
		{"https:///cb", "has no host"},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) { assert.Equal(t, tt.reason, checkRedirectURI(tt.uri)) })
	}
}

// The protected resources are the MCP server, the REST API and the whole
// service, on this server's own root only.
func TestResourceAllowed(t *testing.T) {
	tests := []struct {
		resource string
		want     bool
	}{
		{root + "/mcp", true},
		{root + "/mcp/", true},
		{root + "/api/v1", true},
		{root, true},
		{root + "/", true},
		{root + "/api/v2", false},
		{"https://other.example/mcp", false},
		{"http://localhost:1/mcp", false},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) { assert.Equal(t, tt.want, resourceAllowed(root, tt.resource)) })
	}
}

func TestServes(t *testing.T) {
	for path, want := range map[string]bool{
		"/oauth/token": true, "/oauth/anything": true, ServerMetadataPath: true, ResourceMetadataPath: true,
		ResourceMetadataPath + "/mcp": true, "/.well-known/openid-configuration": true,
		"/oauth": false, "/.well-known/other": false, ResourceMetadataPath + "x": false, "/mcp": false, "/api/v1/account": false,
	} {
		t.Run(path, func(t *testing.T) { assert.Equal(t, want, Serves(httptest.NewRequest("GET", path, nil))) })
	}
}

// Codes and refresh tokens are bounded: past maxGrants one is forgotten
// to make room.
func TestKeepBoundsTheGrants(t *testing.T) {
	m := map[string]*grant{}
	for i := range maxGrants + 5 {
		keep(m, "k"+strconv.Itoa(i), &grant{})
	}
	assert.Len(t, m, maxGrants)
	keep(m, "last", &grant{})
	assert.Len(t, m, maxGrants)
	assert.Contains(t, m, "last", "the new one is kept")
}

// rig is an authorization server over a fresh engine on a manual clock.
type rig struct {
	s   *Server
	env *edge.Env
}

func newRig(t *testing.T) *rig {
	t.Helper()
	eng := simtest.Open(t)
	env := &edge.Env{Eng: eng, Gate: gate.New(eng), Rules: fault.NewSet(0), Log: slog.New(slog.DiscardHandler),
		WallClock: time.Now, Stop: context.Background(), MaxBodyBytes: 1 << 20, ListenURL: root}
	return &rig{s: New(env), env: env}
}

// do serves a request from a local client; form, when set, is the body.
func (r *rig) do(method, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Host = "localhost"
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
	return rec
}

func (r *rig) register(t *testing.T, metadata string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("POST", RegisterPath, strings.NewReader(metadata))
	req.Host = "localhost"
	rec := httptest.NewRecorder()
	r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec, out
}

// client registers a client and returns its id and secret.
func (r *rig) client(t *testing.T, authMethod string) (id, secret string) {
	t.Helper()
	rec, out := r.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"`+authMethod+`"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	secret, _ = out["client_secret"].(string)
	return out["client_id"].(string), secret
}

// code gets an authorization code for the client (approved at once for
// workspace 1) with the given extra parameters.
func (r *rig) code(t *testing.T, clientID string, extra url.Values) string {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st"}}
	for k, v := range extra {
		q[k] = v
	}
	r.s.Approve = 1
	rec := r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
	require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "st", loc.Query().Get("state"))
	assert.Equal(t, root, loc.Query().Get("iss"), "RFC 9207")
	require.NotEmpty(t, loc.Query().Get("code"), "%s", loc)
	return loc.Query().Get("code")
}

// oauthAnswer reads an answer of the token or revocation endpoint.
func oauthAnswer(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	out := map[string]any{}
	if rec.Body.Len() > 0 {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "%s", rec.Body)
	}
	return out
}

func TestRegistrationRules(t *testing.T) {
	r := newRig(t)
	tests := []struct {
		name     string
		metadata string
		status   int
		error    string
		secret   bool
		method   string
	}{
		{"a confidential client by default (client_secret_basic)", `{"redirect_uris":["` + callback + `"]}`, 201, "", true, "client_secret_basic"},
		{"client_secret_post", `{"redirect_uris":["` + callback + `"],"token_endpoint_auth_method":"client_secret_post"}`, 201, "", true, "client_secret_post"},
		{"a public client", `{"redirect_uris":["` + callback + `"],"token_endpoint_auth_method":"none","scope":"read publish"}`, 201, "", false, "none"},
		{"no redirect URI", `{"client_name":"x"}`, 400, "invalid_redirect_uri", false, ""},
		{"an http redirect beyond loopback", `{"redirect_uris":["http://app.example/cb"]}`, 400, "invalid_redirect_uri", false, ""},
		{"not JSON", `redirect_uris=x`, 400, "invalid_client_metadata", false, ""},
		{"an unknown grant type", `{"redirect_uris":["` + callback + `"],"grant_types":["password"]}`, 400, "invalid_client_metadata", false, ""},
		{"a response type but code", `{"redirect_uris":["` + callback + `"],"response_types":["token"]}`, 400, "invalid_client_metadata", false, ""},
		{"an unknown auth method", `{"redirect_uris":["` + callback + `"],"token_endpoint_auth_method":"private_key_jwt"}`, 400, "invalid_client_metadata", false, ""},
		{"an unknown scope", `{"redirect_uris":["` + callback + `"],"scope":"read admin"}`, 400, "invalid_client_metadata", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, out := r.register(t, tt.metadata)
			assert.Equal(t, tt.status, rec.Code, "%s", rec.Body)
			if tt.error != "" {
				assert.Equal(t, tt.error, out["error"])
				assert.NotEmpty(t, out["error_description"])
				assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
				return
			}
			assert.Regexp(t, `^mcl_[0-9a-f]{24}$`, out["client_id"])
			assert.Equal(t, tt.method, out["token_endpoint_auth_method"])
			assert.Equal(t, []any{"authorization_code", "refresh_token"}, out["grant_types"])
			if tt.secret {
				assert.Regexp(t, `^mcs_[0-9a-f]{48}$`, out["client_secret"])
				assert.EqualValues(t, 0, out["client_secret_expires_at"], "a secret that never expires")
			} else {
				assert.NotContains(t, out, "client_secret")
			}
		})
	}
	assert.Equal(t, http.StatusMethodNotAllowed, r.do("GET", RegisterPath, nil, nil).Code)
}

// A confidential client proves itself at the token endpoint with its
// secret, in the Authorization header (basic) or the form (post).
func TestClientAuthentication(t *testing.T) {
	r := newRig(t)
	id, secret := r.client(t, "client_secret_basic")
	basic := func(id, secret string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))}
	}
	tests := []struct {
		name      string
		form      url.Values
		header    map[string]string
		status    int
		error     string
		challenge string // WWW-Authenticate
	}{
		{"basic, right secret", url.Values{}, basic(id, secret), 200, "", ""},
		{"post, right secret", url.Values{"client_id": {id}, "client_secret": {secret}}, nil, 200, "", ""},
		{"basic, wrong secret", url.Values{}, basic(id, "mcs_wrong"), 401, "invalid_client", `Basic realm="oauth"`},
		{"post, no secret", url.Values{"client_id": {id}}, nil, 401, "invalid_client", ""},
		{"no client", url.Values{}, nil, 401, "invalid_client", ""},
		{"unknown client", url.Values{"client_id": {"mcl_nobody"}}, nil, 401, "invalid_client", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{"grant_type": {"authorization_code"}, "code": {r.code(t, id, nil)}, "code_verifier": {verifier},
				"redirect_uri": {callback}}
			for k, v := range tt.form {
				form[k] = v
			}
			rec := r.do("POST", TokenPath, form, tt.header)
			out := oauthAnswer(t, rec)
			assert.Equal(t, tt.status, rec.Code, "%s", rec.Body)
			assert.Equal(t, tt.challenge, rec.Header().Get("WWW-Authenticate"))
			if tt.error != "" {
				assert.Equal(t, tt.error, out["error"])
			} else {
				assert.Equal(t, "Bearer", out["token_type"])
			}
		})
	}
}

// The token endpoint's rules for a code: its client, its redirect URI, its
// verifier, its life on the simulated clock, the resource, used once.
func TestCodeExchangeRules(t *testing.T) {
	r := newRig(t)
	id, _ := r.client(t, "none")
	other, _ := r.client(t, "none")
	exchange := func(clientID, code string, change url.Values) (*httptest.ResponseRecorder, map[string]any) {
		form := url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
			"code_verifier": {verifier}, "redirect_uri": {callback}}
		for k, v := range change {
			form[k] = v
		}
		rec := r.do("POST", TokenPath, form, nil)
		return rec, oauthAnswer(t, rec)
	}
	tests := []struct {
		name   string
		client string
		change url.Values
		before func()
		error  string
	}{
		{"another client's code", other, nil, nil, "invalid_grant"},
		{"a wrong verifier", id, url.Values{"code_verifier": {"not-the-verifier-not-the-verifier-0123456789"}}, nil, "invalid_grant"},
		{"another redirect URI", id, url.Values{"redirect_uri": {"http://127.0.0.1:9/other"}}, nil, "invalid_grant"},
		{"no verifier", id, url.Values{"code_verifier": {""}}, nil, "invalid_request"},
		{"another server's resource", id, url.Values{"resource": {"https://other.example/mcp"}}, nil, "invalid_target"},
		{"no grant type", id, url.Values{"grant_type": {""}}, nil, "invalid_request"},
		{"an unknown grant type", id, url.Values{"grant_type": {"password"}}, nil, "unsupported_grant_type"},
		{"an expired code", id, nil, func() {
			_, err := r.env.Eng.Advance(CodeLifetime)
			require.NoError(t, err)
		}, "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := r.code(t, id, nil)
			if tt.before != nil {
				tt.before()
			}
			rec, out := exchange(tt.client, code, tt.change)
			assert.Equal(t, tt.error, out["error"], "%s", rec.Body)
			assert.NotContains(t, out, "access_token")
		})
	}

	t.Run("a code serves once; its reuse revokes what it gave", func(t *testing.T) {
		code := r.code(t, id, url.Values{"scope": {"read"}})
		rec, out := exchange(id, code, url.Values{"resource": {root + "/mcp"}})
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		assert.Equal(t, "read", out["scope"])
		assert.EqualValues(t, AccessTokenLifetime/time.Second, out["expires_in"])
		token := out["access_token"].(string)
		p, ok := r.env.Eng.Authenticate(token)
		require.True(t, ok)
		assert.Equal(t, uint64(1), p.WorkspaceID)

		_, again := exchange(id, code, nil)
		assert.Equal(t, "invalid_grant", again["error"])
		_, ok = r.env.Eng.Authenticate(token)
		assert.False(t, ok, "the token of a replayed code is revoked")
		refreshed := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"refresh_token"}, "client_id": {id},
			"refresh_token": {out["refresh_token"].(string)}}, nil))
		assert.Equal(t, "invalid_grant", refreshed["error"], "the refresh token of a replayed code is revoked too")
	})
}

// A refresh token is used once (rotation), by its client alone, and may
// narrow the scopes but never widen them; the access token it gives
// supersedes the family's (revoked); revoking it ends the access tokens
// issued with it.
func TestRefreshAndRevoke(t *testing.T) {
	r := newRig(t)
	id, _ := r.client(t, "none")
	other, _ := r.client(t, "none")
	token := func(form url.Values) map[string]any {
		form.Set("client_id", id)
		return oauthAnswer(t, r.do("POST", TokenPath, form, nil))
	}
	first := token(url.Values{"grant_type": {"authorization_code"}, "code": {r.code(t, id, url.Values{"scope": {"read generate"}})},
		"code_verifier": {verifier}, "redirect_uri": {callback}})
	rt := first["refresh_token"].(string)
	assert.Regexp(t, `^ort_[0-9a-f]{48}$`, rt)

	fromOther := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {other}}, nil))
	assert.Equal(t, "invalid_grant", fromOther["error"], "another client's refresh token")

	narrower := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "scope": {"read"}})
	require.Contains(t, narrower, "access_token", "%v", narrower)
	assert.Equal(t, "read", narrower["scope"])
	assert.NotEqual(t, rt, narrower["refresh_token"], "rotated")
	_, ok := r.env.Eng.Authenticate(first["access_token"].(string))
	assert.False(t, ok, "the new access token supersedes the family's")

	next := narrower["refresh_token"].(string)
	// Another client cannot revoke it: 200 all the same (RFC 7009), and
	// nothing ends.
	rec := r.do("POST", RevokePath, url.Values{"token": {next}, "client_id": {other}}, nil)
	assert.Equal(t, http.StatusOK, rec.Code)
	_, ok = r.env.Eng.Authenticate(narrower["access_token"].(string))
	assert.True(t, ok)

	rec = r.do("POST", RevokePath, url.Values{"token": {next}, "client_id": {id}}, nil)
	assert.Equal(t, http.StatusOK, rec.Code)
	_, ok = r.env.Eng.Authenticate(narrower["access_token"].(string))
	assert.False(t, ok, "revoking the refresh token ends the access tokens of its line")
	gone := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next}})
	assert.Equal(t, "invalid_grant", gone["error"])
	assert.Equal(t, "invalid_request", oauthAnswer(t, r.do("POST", RevokePath, url.Values{"client_id": {id}}, nil))["error"])

	another := token(url.Values{"grant_type": {"authorization_code"}, "code": {r.code(t, id, url.Values{"scope": {"read"}})},
		"code_verifier": {verifier}, "redirect_uri": {callback}})
	wider := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {another["refresh_token"].(string)}, "scope": {"read publish"}})
	assert.Equal(t, "invalid_scope", wider["error"], "a refresh never widens the scopes")
	still := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {another["refresh_token"].(string)}})
	assert.Contains(t, still, "access_token", "a refused refresh does not use the token up: %v", still)
}

// A rotated-out refresh token presented again ends its whole family: the
// access and refresh tokens issued since are revoked (RFC 9700, 4.14.2).
func TestRefreshTokenReuseEndsTheFamily(t *testing.T) {
	r := newRig(t)
	id, _ := r.client(t, "none")
	token := func(form url.Values) map[string]any {
		form.Set("client_id", id)
		return oauthAnswer(t, r.do("POST", TokenPath, form, nil))
	}
	first := token(url.Values{"grant_type": {"authorization_code"}, "code": {r.code(t, id, nil)},
		"code_verifier": {verifier}, "redirect_uri": {callback}})
	second := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}})
	require.Contains(t, second, "refresh_token", "%v", second)
	unrelated := token(url.Values{"grant_type": {"authorization_code"}, "code": {r.code(t, id, nil)},
		"code_verifier": {verifier}, "redirect_uri": {callback}})

	reused := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}})
	assert.Equal(t, "invalid_grant", reused["error"])
	_, ok := r.env.Eng.Authenticate(second["access_token"].(string))
	assert.False(t, ok, "the family's live access token is revoked")
	again := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second["refresh_token"].(string)}})
	assert.Equal(t, "invalid_grant", again["error"], "the family's live refresh token is revoked")
	_, ok = r.env.Eng.Authenticate(unrelated["access_token"].(string))
	assert.True(t, ok, "another family of the same client lives on")
}

// Metadata names this server's endpoints under the root the client
// reached it at, and its resources.
func TestMetadata(t *testing.T) {
	r := newRig(t)
	meta := oauthAnswer(t, r.do("GET", ServerMetadataPath, nil, nil))
	assert.Equal(t, root, meta["issuer"])
	assert.Equal(t, root+TokenPath, meta["token_endpoint"])
	assert.Equal(t, []any{"S256"}, meta["code_challenge_methods_supported"])
	tests := []struct {
		path     string
		status   int
		resource string
	}{
		{ResourceMetadataPath + "/mcp", 200, root + "/mcp"},
		{ResourceMetadataPath + "/api/v1", 200, root + "/api/v1"},
		{ResourceMetadataPath, 200, root},
		{ResourceMetadataPath + "/files", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := r.do("GET", tt.path, nil, nil)
			assert.Equal(t, tt.status, rec.Code)
			out := oauthAnswer(t, rec)
			if tt.resource != "" {
				assert.Equal(t, tt.resource, out["resource"])
				assert.Equal(t, []any{root}, out["authorization_servers"])
			}
		})
	}
	assert.Equal(t, ResourceMetadataPath+"/mcp", strings.TrimPrefix(ResourceMetadataURL(root), root))
	assert.Equal(t, http.StatusNotFound, r.do("GET", "/oauth/nope", nil, nil).Code)
}

// Every endpoint of the authorization server refuses a repeated parameter
// with invalid_request and issues nothing (RFC 6749, 3.1 and 3.2): sent
// back to the client's redirect URI when that and the client are sound,
// else answered. resource may be repeated (RFC 8707).
func TestRepeatedParametersAreRefused(t *testing.T) {
	r := newRig(t)
	id, _ := r.client(t, "none")
	r.s.Approve = 1
	authorize := func(extra url.Values) *httptest.ResponseRecorder {
		q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {callback},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st"}}
		for k, v := range extra {
			q[k] = v
		}
		return r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
	}
	for _, name := range []string{"code_challenge", "response_type", "scope", "state", "code_challenge_method"} {
		t.Run("authorize "+name, func(t *testing.T) {
			q := url.Values{"response_type": {"code"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"read"}, "state": {"st"}}
			extra := url.Values{name: {q.Get(name), q.Get(name)}}
			rec := authorize(extra)
			require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
			loc, err := url.Parse(rec.Header().Get("Location"))
			require.NoError(t, err)
			assert.Equal(t, "invalid_request", loc.Query().Get("error"), "%s", loc)
			assert.Contains(t, loc.Query().Get("error_description"), name)
			assert.Empty(t, loc.Query().Get("code"), "no code is issued")
		})
	}
	for _, name := range []string{"client_id", "redirect_uri"} {
		t.Run("authorize "+name, func(t *testing.T) {
			v := map[string]string{"client_id": id, "redirect_uri": callback}[name]
			rec := authorize(url.Values{name: {v, v}})
			assert.Equal(t, http.StatusBadRequest, rec.Code, "not sent to a redirect URI it cannot trust")
			assert.Equal(t, "invalid_request", oauthAnswer(t, rec)["error"])
			assert.Empty(t, rec.Header().Get("Location"))
		})
	}
	t.Run("authorize resource twice", func(t *testing.T) {
		rec := authorize(url.Values{"resource": {root + "/mcp", root + "/api/v1"}})
		require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
		loc, _ := url.Parse(rec.Header().Get("Location"))
		assert.NotEmpty(t, loc.Query().Get("code"), "RFC 8707 lets a client name several resources: %s", loc)
	})

	code := r.code(t, id, nil)
	for _, tc := range []struct {
		name, path string
		form       url.Values
	}{
		{"token: code", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code, code},
			"code_verifier": {verifier}, "redirect_uri": {callback}}},
		{"token: grant_type", TokenPath, url.Values{"grant_type": {"authorization_code", "authorization_code"}, "client_id": {id}, "code": {code},
			"code_verifier": {verifier}, "redirect_uri": {callback}}},
		{"revoke: token", RevokePath, url.Values{"client_id": {id}, "token": {"x", "y"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := r.do("POST", tc.path, tc.form, nil)
			assert.Equal(t, http.StatusBadRequest, rec.Code, "%s", rec.Body)
			out := oauthAnswer(t, rec)
			assert.Equal(t, "invalid_request", out["error"])
			assert.Nil(t, out["access_token"], "nothing is issued")
		})
	}
	// The code was not spent by the refused requests: it still works once.
	rec := r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code},
		"code_verifier": {verifier}, "redirect_uri": {callback}}, nil)
	assert.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
}
