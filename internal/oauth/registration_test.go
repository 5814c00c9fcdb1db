package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/edge"
)

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

// Idle registrations (no tenant holds them) are bounded per client
// address: past the bound the oldest idle client of the address goes, never
// one a tenant holds (a live token or a pending code), which counts against
// its tenant instead; a registration is never refused. A client never
// approved is forgotten after unapprovedLifetime of wall time; one whose
// grants have ended stays registered.
func TestRegistrationsAreBoundedPerAddress(t *testing.T) {
	r := newRig(t)
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.env.WallClock = func() time.Time { return wall }
	reg := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", RegisterPath, strings.NewReader(`{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none"}`))
		req.Host, req.RemoteAddr = "localhost", addr+":40000"
		rec := httptest.NewRecorder()
		r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
		return rec
	}
	idleFrom := func(addr string) int {
		r.s.mu.Lock()
		defer r.s.mu.Unlock()
		n := 0
		for _, c := range r.s.clients {
			if c.addr == addr && c.tenants == 0 {
				n++
			}
		}
		assert.Equal(t, n, r.s.idleFrom[addr], "the count kept is the count")
		return n
	}
	// A victim's client, in use, from the same address as the flood.
	victim, _ := r.client(t, "none") // from httptest's 192.0.2.1
	code := r.code(t, victim, nil)
	first := oauthAnswer(t, reg("192.0.2.1"))["client_id"].(string)
	for range maxClientsPerAddress + 50 {
		require.Equal(t, http.StatusCreated, reg("192.0.2.1").Code, "never refused")
	}
	assert.Equal(t, maxClientsPerAddress, idleFrom("192.0.2.1"))
	r.s.mu.Lock()
	_, kept := r.s.clients[victim]
	_, oldest := r.s.clients[first]
	r.s.mu.Unlock()
	assert.True(t, kept, "a client with a pending code is never evicted")
	assert.False(t, oldest, "the oldest idle client of the address went first")
	out := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {victim},
		"code": {code}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
	assert.Contains(t, out, "access_token", "%v", out)
	assert.Equal(t, http.StatusCreated, reg("198.51.100.7").Code, "another address is not crowded out")
	assert.Equal(t, 1, idleFrom("198.51.100.7"))

	// The victim's grants end: it is idle again, counted against its
	// address, and stays past the lifetime of one never approved.
	r.do("POST", RevokePath, url.Values{"client_id": {victim}, "token": {out["refresh_token"].(string)}}, nil)
	assert.Equal(t, maxClientsPerAddress, idleFrom("192.0.2.1"), "it took the place of the oldest")
	wall = wall.Add(unapprovedLifetime)
	assert.Equal(t, http.StatusCreated, reg("198.51.100.8").Code)
	assert.Equal(t, 1, idleFrom("192.0.2.1"), "the clients never approved are forgotten, the victim stays")
	r.s.mu.Lock()
	_, kept = r.s.clients[victim]
	r.s.mu.Unlock()
	assert.True(t, kept, "one approved once stays registered")
	assert.Equal(t, 1, idleFrom("198.51.100.8"), "a new one lives its lifetime")
}
