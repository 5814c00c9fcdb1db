package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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

// A redirect URI is compared with the registered one as an exact string
// (OAuth 2.1, 2.3.1; RFC 9700, 4.1.3): neither percent-decoding, nor the
// case of the scheme or host, nor a fragment (RFC 6749, 3.1.2) makes
// another URI equal to it; the port of a loopback one aside (RFC 8252,
// 7.3), where the rest is still compared exactly. A refused one is an
// error answered in OAuth's error object, never a redirect.
func TestRedirectURIsAreComparedAsExactStrings(t *testing.T) {
	r := newRig(t)
	rec, out := r.register(t, `{"redirect_uris":["http://127.0.0.1:9/cb","https://app.example/cb","com.example.app:/oauth"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	id := out["client_id"].(string)
	r.s.Approve = 1
	authorize := func(redirect string) *httptest.ResponseRecorder {
		q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {redirect}, "code_challenge": {challenge},
			"code_challenge_method": {"S256"}}
		return r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
	}
	for _, redirect := range []string{"http://127.0.0.1:9/cb", "http://127.0.0.1:40001/cb", "http://127.0.0.1/cb",
		"https://app.example/cb", "com.example.app:/oauth"} {
		rec := authorize(redirect)
		require.Equal(t, http.StatusFound, rec.Code, "%s: %s", redirect, rec.Body)
		loc, err := url.Parse(rec.Header().Get("Location"))
		require.NoError(t, err)
		assert.NotEmpty(t, loc.Query().Get("code"), redirect)
	}
	for _, redirect := range []string{
		"http://127.0.0.1:9/cb#x", "http://127.0.0.1:9/cb#", "https://app.example/cb#frag", "https://app.example/cb#",
		"http://127.0.0.1:9/%63b", "http://127.0.0.1:40001/%63b", "https://app.example/%63b", "https://app.example/c%62",
		"HTTP://127.0.0.1:9/cb", "Http://127.0.0.1:40001/cb", "HTTPS://app.example/cb", "https://APP.example/cb",
		"https://app.example/CB", "https://app.example:443/cb", "https://app.example/cb/", "https://app.example/cb?",
		"https://app.example//cb", "https://app.example/./cb", "com.example.App:/oauth", "COM.EXAMPLE.APP:/oauth",
		"http://127.0.0.1:9/cb/", "http://127.0.0.1:9//cb", "http://127.0.0.1:/cb", "http://u@127.0.0.1:9/cb",
	} {
		t.Run(redirect, func(t *testing.T) {
			rec := authorize(redirect)
			assert.Equal(t, http.StatusBadRequest, rec.Code, "%s", rec.Body)
			assert.Empty(t, rec.Header().Get("Location"), "nothing is sent to a URI that is not the registered one")
			out := oauthAnswer(t, rec)
			assert.Equal(t, "invalid_request", out["error"])
			assert.Contains(t, out["error_description"], strconv.Quote(redirect))
			assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		})
	}
	desc := oauthAnswer(t, authorize("https://app.example/cb#frag"))["error_description"]
	assert.Contains(t, desc, "fragment", "the reason is named")

	for _, uri := range []string{"https://app.example/cb#", "http://127.0.0.1:9/cb#x"} {
		rec, out := r.register(t, `{"redirect_uris":["`+uri+`"],"token_endpoint_auth_method":"none"}`)
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", uri, rec.Body)
		assert.Equal(t, "invalid_redirect_uri", out["error"], uri)
		assert.Contains(t, out["error_description"], "has a fragment")
	}
}
