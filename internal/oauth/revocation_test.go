package oauth

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
