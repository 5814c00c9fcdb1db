package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

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

// On the manual clock nothing piles up: a refresh revokes the access token
// it supersedes, and once the simulated clock passes an expiry the next
// request of the authorization server purges what expired.
func TestTokensArePurgedOnTheManualClock(t *testing.T) {
	r := newRig(t)
	require.Equal(t, sim.ClockManual, r.env.Eng.Clock().Mode())
	id, _ := r.client(t, "none")
	first := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id},
		"code": {r.code(t, id, nil)}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
	access, rt := []string{first["access_token"].(string)}, first["refresh_token"].(string)
	for range 5 {
		next := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {rt}}, nil))
		access, rt = append(access, next["access_token"].(string)), next["refresh_token"].(string)
	}
	for i, tok := range access {
		_, ok := r.env.Eng.Authenticate(tok)
		assert.Equal(t, i == len(access)-1, ok, "only the last access token lives (%d)", i)
	}

	once, _ := r.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none","grant_types":["authorization_code"]}`)
	onceID := oauthAnswer(t, once)["client_id"].(string)
	for range 3 {
		out := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {onceID},
			"code": {r.code(t, onceID, nil)}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
		require.NotContains(t, out, "refresh_token")
	}
	_, err := r.env.Eng.Advance(AccessTokenLifetime)
	require.NoError(t, err)
	r.do("GET", RegisterPath, nil, nil) // any request of /oauth/*
	n, err := r.env.Eng.PurgeAllExpiredTokens()
	require.NoError(t, err)
	assert.Zero(t, n, "the request purged every expired token")
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	assert.Len(t, r.s.tenants[0].families, 1, "the families without a refresh token ended with their access tokens")
	assert.Empty(t, r.s.codes, "used codes past their life are forgotten")
}
