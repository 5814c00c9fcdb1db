package testkit

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// OAuthCallback is the redirect URI of the agent OAuthClient registers.
const OAuthCallback = "http://127.0.0.1:33418/callback"

// OAuthClient discovers the authorization server from a 401 of /mcp as an
// MCP client does (RFC 9728, then RFC 8414), registers a public client
// (RFC 7591) named "agent under test" and returns its configuration for
// golang.org/x/oauth2, with the scopes read and generate. It checks what it
// discovers on the way.
func OAuthClient(t testing.TB, srv Server) *oauth2.Config {
	t.Helper()
	resp, _ := Send(t, srv, "POST", "/mcp", "", map[string]string{"Content-Type": "application/json"}, `{}`)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	challenge := resp.Header.Get("WWW-Authenticate")
	prmURL := challenge[strings.Index(challenge, `resource_metadata="`)+len(`resource_metadata="`):]
	prmURL = prmURL[:strings.IndexByte(prmURL, '"')]
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	GetJSON(t, srv, prmURL, &prm)
	assert.Equal(t, srv.URL()+"/mcp", prm.Resource)
	require.Len(t, prm.AuthorizationServers, 1)
	var meta struct {
		Issuer                        string   `json:"issuer"`
		AuthorizationEndpoint         string   `json:"authorization_endpoint"`
		TokenEndpoint                 string   `json:"token_endpoint"`
		RegistrationEndpoint          string   `json:"registration_endpoint"`
		RevocationEndpoint            string   `json:"revocation_endpoint"`
		CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
	}
	GetJSON(t, srv, prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &meta)
	assert.Equal(t, prm.AuthorizationServers[0], meta.Issuer)
	assert.Equal(t, []string{"S256"}, meta.CodeChallengeMethodsSupported)

	resp, body := Post(t, srv, meta.RegistrationEndpoint, "application/json",
		`{"client_name":"agent under test","redirect_uris":["`+OAuthCallback+`"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, body)
	var reg struct {
		ClientID string `json:"client_id"`
		Secret   string `json:"client_secret"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &reg))
	assert.Empty(t, reg.Secret, "a public client has no secret")
	return &oauth2.Config{ClientID: reg.ClientID, RedirectURL: OAuthCallback, Scopes: []string{"read", "generate"},
		Endpoint: oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}
}

// Authorize sends the user agent to the authorization endpoint (authURL,
// auto-approved: the server's OAuthApprove) and returns the query it was
// sent back to OAuthCallback with.
func Authorize(t testing.TB, srv Server, authURL string) url.Values {
	t.Helper()
	req, err := http.NewRequest("GET", authURL, nil)
	require.NoError(t, err)
	resp, body := Do(t, srv, req)
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc.String(), OAuthCallback), loc.String())
	return loc.Query()
}

// AssertOAuthError asserts that err is the token endpoint's error code.
func AssertOAuthError(t testing.TB, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if assert.ErrorAs(t, err, &re) {
		assert.Equal(t, code, re.ErrorCode, "%s", re.Body)
	}
}

// GetJSON gets the address u of the server (a whole URL), which must
// answer 200, and decodes its JSON into v.
func GetJSON(t testing.TB, srv Server, u string, v any) {
	t.Helper()
	resp, err := srv.Client().Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, u)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// Post posts body of type ctype to the address u of the server (a whole
// URL), without following redirects, and returns the response (its body
// closed) and the body read.
func Post(t testing.TB, srv Server, u, ctype, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", ctype)
	return Do(t, srv, req)
}
