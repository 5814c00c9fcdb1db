package oauth

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The authorization server's RFC departures an independent check found:
// a loopback redirect URI is matched on any port (RFC 8252, 7.3; OAuth
// 2.1), a missing response_type is invalid_request (only another value is
// unsupported_response_type), and the metadata says the authorization
// response carries iss (RFC 9207).
func TestAuthorizationFollowsTheRFCs(t *testing.T) {
	r := newRig(t)
	rec, out := r.register(t, `{"redirect_uris":["http://127.0.0.1:9/cb","http://localhost/cb","https://app.example/cb"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	id := out["client_id"].(string)
	r.s.Approve = 1
	authorize := func(redirect, responseType string) (int, *url.URL) {
		q := url.Values{"client_id": {id}, "redirect_uri": {redirect}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
		if responseType != "" {
			q.Set("response_type", responseType)
		}
		rec := r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
		loc, _ := url.Parse(rec.Header().Get("Location"))
		return rec.Code, loc
	}
	for _, redirect := range []string{"http://127.0.0.1:9/cb", "http://127.0.0.1:51234/cb", "http://localhost:8765/cb"} {
		code, loc := authorize(redirect, "code")
		require.Equal(t, http.StatusFound, code, redirect)
		assert.Equal(t, redirect, loc.Scheme+"://"+loc.Host+loc.Path, "the code goes to the port asked")
		assert.NotEmpty(t, loc.Query().Get("code"), redirect)
	}
	for _, redirect := range []string{"http://127.0.0.1:51234/other", "https://app.example:8443/cb", "http://[::1]:9/cb", "http://127.0.0.1:9/cb?x=1"} {
		code, _ := authorize(redirect, "code")
		assert.Equal(t, http.StatusBadRequest, code, "%s: another path, host or query, or a port of a URI that is not loopback", redirect)
	}

	_, loc := authorize("http://127.0.0.1:9/cb", "")
	assert.Equal(t, "invalid_request", loc.Query().Get("error"), "no response_type")
	assert.Empty(t, loc.Query().Get("code"))
	_, loc = authorize("http://127.0.0.1:9/cb", "token")
	assert.Equal(t, "unsupported_response_type", loc.Query().Get("error"))

	meta := oauthAnswer(t, r.do("GET", ServerMetadataPath, nil, nil))
	assert.Equal(t, true, meta["authorization_response_iss_parameter_supported"])
}
