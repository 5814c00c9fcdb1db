package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The authorization server as an agent meets it: golang.org/x/oauth2
// against a whole server, which checks the tokens at its doors.

// TestOAuthRefusals: each bad request is refused with the RFC's error, and
// nothing is issued.
func TestOAuthRefusals(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.OAuthApprove = 1 })
	ctx := context.Background()
	cfg := testkit.OAuthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	code := func() string {
		return testkit.Authorize(t, srv, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))).Get("code")
	}
	tokensBefore := len(testkit.Tokens(t, srv, 1))

	_, err := cfg.Exchange(ctx, code(), oauth2.VerifierOption(oauth2.GenerateVerifier()))
	testkit.AssertOAuthError(t, err, "invalid_grant") // a wrong PKCE verifier
	_, err = cfg.Exchange(ctx, code(), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", "https://other.example/mcp"))
	testkit.AssertOAuthError(t, err, "invalid_target") // a token for another resource
	c := code()
	srv.Advance(11 * time.Minute)
	_, err = cfg.Exchange(ctx, c, oauth2.VerifierOption(verifier))
	testkit.AssertOAuthError(t, err, "invalid_grant") // an expired code
	assert.Equal(t, tokensBefore, len(testkit.Tokens(t, srv, 1)), "nothing issued")

	// A reused code is refused, and the token issued with it revoked.
	c = code()
	tok, err := cfg.Exchange(ctx, c, oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	_, err = cfg.Exchange(ctx, c, oauth2.VerifierOption(verifier))
	testkit.AssertOAuthError(t, err, "invalid_grant")
	status, _, _ := testkit.REST(t, srv, tok.AccessToken, "GET", "/account", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "the token of a replayed code is revoked")

	// A redirect URI not registered: an error, not a redirect.
	bad := *cfg
	bad.RedirectURL = "http://127.0.0.1:9/elsewhere"
	req, _ := http.NewRequest("GET", bad.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), nil)
	resp, body := testkit.Do(t, srv, req)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Location"))
	assert.Contains(t, body, `"error":"invalid_request"`)

	// Errors the client can be told go back to it.
	for _, tc := range []struct {
		opts []oauth2.AuthCodeOption
		code string
	}{
		{nil, "invalid_request"}, // no PKCE
		{[]oauth2.AuthCodeOption{oauth2.SetAuthURLParam("code_challenge", "x"), oauth2.SetAuthURLParam("code_challenge_method", "plain")}, "invalid_request"},
		{[]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", "https://other.example/")}, "invalid_target"},
		{[]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("scope", "read admin")}, "invalid_scope"},
	} {
		back := testkit.Authorize(t, srv, cfg.AuthCodeURL("s", tc.opts...))
		assert.Equal(t, tc.code, back.Get("error"), "%v", back)
		assert.Empty(t, back.Get("code"))
	}

	// An unknown client at the token endpoint.
	other := *cfg
	other.ClientID = "mcl_nobody"
	_, err = other.Exchange(ctx, code(), oauth2.VerifierOption(verifier))
	testkit.AssertOAuthError(t, err, "invalid_client")
}

// TestOAuthConsentPage: without auto-approval the user picks a workspace
// and the scopes on a page; denying sends the client access_denied.
func TestOAuthConsentPage(t *testing.T) {
	srv := mediamock.RunT(t)
	ctx := context.Background()
	cfg := testkit.OAuthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	req, _ := http.NewRequest("GET", authURL, nil)
	resp, page := testkit.Do(t, srv, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "Authorize agent under test")
	assert.Contains(t, page, `name="workspace"`)
	assert.Contains(t, page, `value="generate" checked`)

	u, _ := url.Parse(authURL)
	form := u.Query()
	form.Set("workspace", "2")
	form.Set("grant", "read")
	form.Set("decision", "approve")
	resp, body := testkit.Post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	status, account, _ := testkit.REST(t, srv, tok.AccessToken, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, 2, account["workspace_id"])
	assert.Equal(t, []any{"read"}, account["scopes"])
	status, _, h := testkit.REST(t, srv, tok.AccessToken, "POST", "/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"})
	assert.Equal(t, http.StatusForbidden, status, "only read was granted")
	assert.Contains(t, h.Get("WWW-Authenticate"), `scope="generate"`)

	form.Set("decision", "deny")
	resp, _ = testkit.Post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
	loc, _ = url.Parse(resp.Header.Get("Location"))
	assert.Equal(t, "access_denied", loc.Query().Get("error"))

	// A page of another site cannot submit the form for the user.
	req, _ = http.NewRequest("POST", cfg.Endpoint.AuthURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, _ = testkit.Do(t, srv, req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// On a shared server (a control token, sandboxes), the consent page names
// no sandbox, and approving for a sandbox's workspace without its control
// token issues nothing; with it, the token is worth that sandbox alone.
func TestOAuthConsentOnASharedServer(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "operator" })
	victim := srv.Sandbox(t, func(s *mediamock.SandboxSpec) { s.Name = "Victim Suite" })
	mine := srv.Sandbox(t)
	cfg := testkit.OAuthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	req, _ := http.NewRequest("GET", authURL, nil)
	resp, page := testkit.Do(t, srv, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, page, "Victim Suite")
	assert.Contains(t, page, testkit.OAuthCallback, "the page names where the code goes")

	u, _ := url.Parse(authURL)
	form := u.Query()
	form.Set("workspace", strconv.FormatUint(victim.WorkspaceID, 10))
	form["grant"] = []string{"read", "generate"}
	form.Set("decision", "approve")
	for _, credential := range []string{"", mine.ControlToken, "sbc_1_c749dfcb6aeeabe2"} {
		form.Set("credential", credential)
		resp, body := testkit.Post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "credential %q: %s", credential, body)
		assert.Empty(t, resp.Header.Get("Location"), "nothing issued")
	}
	form.Set("workspace", "sandbox")
	form.Set("credential", mine.ControlToken)
	resp, body := testkit.Post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tok, err := cfg.Exchange(context.Background(), loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	status, account, _ := testkit.REST(t, srv, tok.AccessToken, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, mine.WorkspaceID, account["workspace_id"])
}

// On a shared local server every suite comes from 127.0.0.1: a suite that
// registers 256 clients and approves each in its sandbox leaves another
// sandbox's suite free to register (201) and be approved, and deleting the
// hog's sandbox frees its clients at once.
func TestOAuthSandboxesShareAnAddress(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "operator" })
	hog, other := srv.Sandbox(t), srv.Sandbox(t)
	verifier := oauth2.GenerateVerifier()
	register := func() (int, string) {
		resp, body := testkit.Post(t, srv, srv.URL()+"/oauth/register", "application/json",
			`{"redirect_uris":["`+testkit.OAuthCallback+`"],"token_endpoint_auth_method":"none"}`)
		var out struct {
			ID string `json:"client_id"`
		}
		_ = json.Unmarshal([]byte(body), &out)
		return resp.StatusCode, out.ID
	}
	approve := func(id, controlToken string) string {
		form := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {testkit.OAuthCallback},
			"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
			"workspace": {"sandbox"}, "credential": {controlToken}, "grant": {"read"}, "decision": {"approve"}}
		resp, body := testkit.Post(t, srv, srv.URL()+"/oauth/authorize", "application/x-www-form-urlencoded", form.Encode())
		require.Equal(t, http.StatusFound, resp.StatusCode, body)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		require.NotEmpty(t, loc.Query().Get("code"), "%s", loc)
		return loc.Query().Get("code")
	}
	exchange := func(id, code string) (*oauth2.Token, error) {
		cfg := oauth2.Config{ClientID: id, RedirectURL: testkit.OAuthCallback,
			Endpoint: oauth2.Endpoint{TokenURL: srv.URL() + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
		return cfg.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	}

	var firstID, firstCode string
	for i := range 256 {
		status, id := register()
		require.Equal(t, http.StatusCreated, status, "hog client %d", i)
		code := approve(id, hog.ControlToken)
		if i == 0 {
			firstID, firstCode = id, code
		}
	}
	status, id := register()
	require.Equal(t, http.StatusCreated, status, "another sandbox's suite registers")
	tok, err := exchange(id, approve(id, other.ControlToken))
	require.NoError(t, err)
	status, account, _ := testkit.REST(t, srv, tok.AccessToken, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, other.WorkspaceID, account["workspace_id"])

	require.NoError(t, hog.Delete())
	_, err = exchange(firstID, firstCode)
	testkit.AssertOAuthError(t, err, "invalid_client") // forgotten with its sandbox
	status, _, _ = testkit.REST(t, srv, tok.AccessToken, "GET", "/account", nil)
	assert.Equal(t, http.StatusOK, status, "the other sandbox's token lives on")
}
