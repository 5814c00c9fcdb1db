package mediamock_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

const callback = "http://127.0.0.1:33418/callback"

// oauthClient discovers the authorization server from a 401 of /mcp as an
// MCP client does (RFC 9728, then RFC 8414), registers a public client
// (RFC 7591) and returns its configuration for golang.org/x/oauth2.
func oauthClient(t *testing.T, srv *mediamock.Server) *oauth2.Config {
	t.Helper()
	resp, _ := testkit.Send(t, srv, "POST", "/mcp", "", map[string]string{"Content-Type": "application/json"}, `{}`)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	challenge := resp.Header.Get("WWW-Authenticate")
	prmURL := challenge[strings.Index(challenge, `resource_metadata="`)+len(`resource_metadata="`):]
	prmURL = prmURL[:strings.IndexByte(prmURL, '"')]
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, srv, prmURL, &prm)
	assert.Equal(t, srv.MCPURL(), prm.Resource)
	require.Len(t, prm.AuthorizationServers, 1)
	var meta struct {
		Issuer                        string   `json:"issuer"`
		AuthorizationEndpoint         string   `json:"authorization_endpoint"`
		TokenEndpoint                 string   `json:"token_endpoint"`
		RegistrationEndpoint          string   `json:"registration_endpoint"`
		RevocationEndpoint            string   `json:"revocation_endpoint"`
		CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
	}
	getJSON(t, srv, prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &meta)
	assert.Equal(t, prm.AuthorizationServers[0], meta.Issuer)
	assert.Equal(t, []string{"S256"}, meta.CodeChallengeMethodsSupported)

	resp, body := post(t, srv, meta.RegistrationEndpoint, "application/json",
		`{"client_name":"agent under test","redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, body)
	var reg struct {
		ClientID string `json:"client_id"`
		Secret   string `json:"client_secret"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &reg))
	assert.Empty(t, reg.Secret, "a public client has no secret")
	return &oauth2.Config{ClientID: reg.ClientID, RedirectURL: callback, Scopes: []string{"read", "generate"},
		Endpoint: oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}
}

func getJSON(t *testing.T, srv *mediamock.Server, u string, v any) {
	t.Helper()
	resp, err := srv.Client().Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, u)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

func post(t *testing.T, srv *mediamock.Server, u, ctype, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", ctype)
	return testkit.Do(t, srv, req)
}

// authorize sends the user agent to the authorization endpoint and returns
// where it was sent back to.
func authorize(t *testing.T, srv *mediamock.Server, authURL string) url.Values {
	t.Helper()
	req, err := http.NewRequest("GET", authURL, nil)
	require.NoError(t, err)
	resp, body := testkit.Do(t, srv, req)
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc.String(), callback), loc.String())
	return loc.Query()
}

func restStatus(t *testing.T, srv *mediamock.Server, token string) (int, map[string]any, http.Header) {
	t.Helper()
	return testkit.REST(t, srv, token, "GET", "/account", nil)
}

// TestOAuthAuthorizationCodeFlow: an OAuth client (golang.org/x/oauth2)
// discovers the authorization server, registers, authorizes with PKCE
// (auto-approved), gets a token that REST and MCP (the official Go SDK)
// both accept with the scopes granted, refreshes it, and sees it end when
// it expires on the simulated clock and when it is revoked.
func TestOAuthAuthorizationCodeFlow(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.OAuthApprove = 1 })
	ctx := context.Background()
	cfg := oauthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	back := authorize(t, srv, cfg.AuthCodeURL("state-42", oauth2.S256ChallengeOption(verifier)))
	assert.Equal(t, "state-42", back.Get("state"))
	assert.Equal(t, strings.TrimSuffix(srv.MCPURL(), "/mcp"), back.Get("iss"))
	tok, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier)) // no resource: both doors
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(tok.AccessToken, "oat_"), tok.AccessToken)
	assert.NotEmpty(t, tok.RefreshToken)
	assert.Equal(t, "read generate", tok.Extra("scope"))

	// REST takes the token, as the workspace approved, with its scopes.
	status, account, _ := restStatus(t, srv, tok.AccessToken)
	require.Equal(t, http.StatusOK, status, "%v", account)
	assert.EqualValues(t, 1, account["workspace_id"])
	assert.Equal(t, "oauth", account["token_type"])
	assert.ElementsMatch(t, []any{"read", "generate"}, account["scopes"])

	// So does MCP, through the official Go SDK.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "oauth-test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.MCPURL(), HTTPClient: cfg.Client(ctx, tok)}, nil)
	require.NoError(t, err)
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, tools.Tools)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_account", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	cs.Close()

	// A refresh gives a new access token and a new refresh token; the old
	// access token is superseded (revoked) and the old refresh token used
	// up.
	refreshed, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	require.NoError(t, err)
	assert.NotEqual(t, tok.AccessToken, refreshed.AccessToken)
	assert.NotEqual(t, tok.RefreshToken, refreshed.RefreshToken)
	status, _, _ = restStatus(t, srv, tok.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "superseded")
	status, _, _ = restStatus(t, srv, refreshed.AccessToken)
	assert.Equal(t, http.StatusOK, status)

	// Access tokens end an hour later on the simulated clock; the next
	// request of the authorization server purges them from the state.
	before := len(workspaceTokens(t, srv))
	require.NoError(t, srv.Advance(time.Hour))
	status, body, h := restStatus(t, srv, refreshed.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "%v", body)
	assert.Contains(t, h.Get("WWW-Authenticate"), `error="invalid_token"`)
	fresh, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token()
	require.NoError(t, err)
	assert.Equal(t, before-1+1, len(workspaceTokens(t, srv)), "the expired token gone, the new one there")
	status, _, _ = restStatus(t, srv, fresh.AccessToken)
	require.Equal(t, http.StatusOK, status)

	// A rotated-out refresh token presented again ends its whole line:
	// the live access and refresh tokens are revoked.
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	assertOAuthError(t, err, "invalid_grant")
	status, _, _ = restStatus(t, srv, fresh.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "the family is revoked")
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken}).Token()
	assertOAuthError(t, err, "invalid_grant")

	// A revoked refresh token takes its access tokens with it.
	verifier = oauth2.GenerateVerifier()
	back = authorize(t, srv, cfg.AuthCodeURL("state-43", oauth2.S256ChallengeOption(verifier)))
	again, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	resp, body2 := post(t, srv, strings.Replace(cfg.Endpoint.TokenURL, "/token", "/revoke", 1), "application/x-www-form-urlencoded",
		url.Values{"token": {again.RefreshToken}, "client_id": {cfg.ClientID}}.Encode())
	require.Equal(t, http.StatusOK, resp.StatusCode, body2)
	status, _, _ = restStatus(t, srv, again.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "revoked")
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: again.RefreshToken}).Token()
	assertOAuthError(t, err, "invalid_grant")
}

func assertOAuthError(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if assert.ErrorAs(t, err, &re) {
		assert.Equal(t, code, re.ErrorCode, "%s", re.Body)
	}
}

// TestOAuthRefusals: each bad request is refused with the RFC's error, and
// nothing is issued.
func TestOAuthRefusals(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.OAuthApprove = 1 })
	ctx := context.Background()
	cfg := oauthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	code := func() string {
		return authorize(t, srv, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))).Get("code")
	}
	tokensBefore := len(workspaceTokens(t, srv))

	_, err := cfg.Exchange(ctx, code(), oauth2.VerifierOption(oauth2.GenerateVerifier()))
	assertOAuthError(t, err, "invalid_grant") // a wrong PKCE verifier
	_, err = cfg.Exchange(ctx, code(), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", "https://other.example/mcp"))
	assertOAuthError(t, err, "invalid_target") // a token for another resource
	c := code()
	srv.Advance(11 * time.Minute)
	_, err = cfg.Exchange(ctx, c, oauth2.VerifierOption(verifier))
	assertOAuthError(t, err, "invalid_grant") // an expired code
	assert.Equal(t, tokensBefore, len(workspaceTokens(t, srv)), "nothing issued")

	// A reused code is refused, and the token issued with it revoked.
	c = code()
	tok, err := cfg.Exchange(ctx, c, oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	_, err = cfg.Exchange(ctx, c, oauth2.VerifierOption(verifier))
	assertOAuthError(t, err, "invalid_grant")
	status, _, _ := restStatus(t, srv, tok.AccessToken)
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
		back := authorize(t, srv, cfg.AuthCodeURL("s", tc.opts...))
		assert.Equal(t, tc.code, back.Get("error"), "%v", back)
		assert.Empty(t, back.Get("code"))
	}

	// An unknown client at the token endpoint.
	other := *cfg
	other.ClientID = "mcl_nobody"
	_, err = other.Exchange(ctx, code(), oauth2.VerifierOption(verifier))
	assertOAuthError(t, err, "invalid_client")
}

// TestOAuthConsentPage: without auto-approval the user picks a workspace
// and the scopes on a page; denying sends the client access_denied.
func TestOAuthConsentPage(t *testing.T) {
	srv := mediamock.RunT(t)
	ctx := context.Background()
	cfg := oauthClient(t, srv)
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
	resp, body := post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	status, account, _ := restStatus(t, srv, tok.AccessToken)
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, 2, account["workspace_id"])
	assert.Equal(t, []any{"read"}, account["scopes"])
	status, _, h := testkit.REST(t, srv, tok.AccessToken, "POST", "/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"})
	assert.Equal(t, http.StatusForbidden, status, "only read was granted")
	assert.Contains(t, h.Get("WWW-Authenticate"), `scope="generate"`)

	form.Set("decision", "deny")
	resp, _ = post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
	loc, _ = url.Parse(resp.Header.Get("Location"))
	assert.Equal(t, "access_denied", loc.Query().Get("error"))

	// A page of another site cannot submit the form for the user.
	req, _ = http.NewRequest("POST", cfg.Endpoint.AuthURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, _ = testkit.Do(t, srv, req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// workspaceTokens lists the tokens of workspace 1, from the control API.
func workspaceTokens(t *testing.T, srv *mediamock.Server) []any {
	t.Helper()
	status, body := testkit.Control(t, srv, "GET", "/workspaces/1", "")
	require.Equal(t, http.StatusOK, status, body)
	return testkit.JSON(t, body)["tokens"].([]any)
}

// A token issued for one resource (RFC 8707) works there alone: the other
// door answers 401 with WWW-Authenticate error="invalid_token" (RFC 6750),
// as the MCP authorization spec's audience rule asks; a token issued for
// both, or for none in particular, works on both. A refresh keeps the
// binding and may not widen it.
func TestOAuthTokenBoundToItsResource(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.OAuthApprove = 1 })
	ctx := context.Background()
	cfg := oauthClient(t, srv)
	token := func(resources ...string) *oauth2.Token {
		t.Helper()
		verifier := oauth2.GenerateVerifier()
		authURL := cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier))
		for _, r := range resources {
			authURL += "&resource=" + url.QueryEscape(r)
		}
		back := authorize(t, srv, authURL)
		require.NotEmpty(t, back.Get("code"), "%v", back)
		tok, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
		require.NoError(t, err)
		return tok
	}
	mcpStatus := func(tok string) (int, http.Header) {
		t.Helper()
		req, err := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	api := strings.TrimSuffix(srv.BaseURL(), "/")
	for _, tc := range []struct {
		name      string
		resources []string
		rest, mcp int
	}{
		{"for /mcp", []string{srv.MCPURL()}, http.StatusUnauthorized, http.StatusOK},
		{"for /api/v1", []string{api}, http.StatusOK, http.StatusUnauthorized},
		{"for both", []string{srv.MCPURL(), api}, http.StatusOK, http.StatusOK},
		{"for none in particular", nil, http.StatusOK, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := token(tc.resources...)
			status, body, h := restStatus(t, srv, tok.AccessToken)
			assert.Equal(t, tc.rest, status, "REST: %v", body)
			if status == http.StatusUnauthorized {
				assert.Contains(t, h.Get("WWW-Authenticate"), `error="invalid_token"`)
				assert.Equal(t, "invalid_credentials", body["error"].(map[string]any)["code"])
			}
			status, h = mcpStatus(tok.AccessToken)
			if tc.mcp == http.StatusOK {
				assert.NotEqual(t, http.StatusUnauthorized, status, "MCP takes the token (a bare ping is its own business)")
			} else {
				assert.Equal(t, tc.mcp, status, "MCP")
			}
			if status == http.StatusUnauthorized {
				assert.Contains(t, h.Get("WWW-Authenticate"), `error="invalid_token"`)
				assert.Contains(t, h.Get("WWW-Authenticate"), "resource_metadata=")
			}
		})
	}

	// A refresh keeps the binding, may narrow it, and may not widen it.
	bound := token(srv.MCPURL())
	refreshed, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: bound.RefreshToken}).Token()
	require.NoError(t, err)
	status, _, _ := restStatus(t, srv, refreshed.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "still bound to /mcp")
	resp, body := post(t, srv, cfg.Endpoint.TokenURL, "application/x-www-form-urlencoded", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {refreshed.RefreshToken}, "client_id": {cfg.ClientID}, "resource": {api}}.Encode())
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "invalid_target")
}

// On a shared server (a control token, sandboxes), the consent page names
// no sandbox, and approving for a sandbox's workspace without its control
// token issues nothing; with it, the token is worth that sandbox alone.
func TestOAuthConsentOnASharedServer(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "operator" })
	victim := srv.Sandbox(t, func(s *mediamock.SandboxSpec) { s.Name = "Victim Suite" })
	mine := srv.Sandbox(t)
	cfg := oauthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	req, _ := http.NewRequest("GET", authURL, nil)
	resp, page := testkit.Do(t, srv, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, page, "Victim Suite")
	assert.Contains(t, page, callback, "the page names where the code goes")

	u, _ := url.Parse(authURL)
	form := u.Query()
	form.Set("workspace", strconv.FormatUint(victim.WorkspaceID, 10))
	form["grant"] = []string{"read", "generate"}
	form.Set("decision", "approve")
	for _, credential := range []string{"", mine.ControlToken, "sbc_1_c749dfcb6aeeabe2"} {
		form.Set("credential", credential)
		resp, body := post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "credential %q: %s", credential, body)
		assert.Empty(t, resp.Header.Get("Location"), "nothing issued")
	}
	form.Set("workspace", "sandbox")
	form.Set("credential", mine.ControlToken)
	resp, body := post(t, srv, cfg.Endpoint.AuthURL, "application/x-www-form-urlencoded", form.Encode())
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tok, err := cfg.Exchange(context.Background(), loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	status, account, _ := restStatus(t, srv, tok.AccessToken)
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, mine.WorkspaceID, account["workspace_id"])
}
