package oauth_test

import (
	"context"
	"net/http"
	"net/url"
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
	cfg := testkit.OAuthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	back := testkit.Authorize(t, srv, cfg.AuthCodeURL("state-42", oauth2.S256ChallengeOption(verifier)))
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
	before := len(testkit.Tokens(t, srv, 1))
	require.NoError(t, srv.Advance(time.Hour))
	status, body, h := restStatus(t, srv, refreshed.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "%v", body)
	assert.Contains(t, h.Get("WWW-Authenticate"), `error="invalid_token"`)
	fresh, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token()
	require.NoError(t, err)
	assert.Equal(t, before-1+1, len(testkit.Tokens(t, srv, 1)), "the expired token gone, the new one there")
	status, _, _ = restStatus(t, srv, fresh.AccessToken)
	require.Equal(t, http.StatusOK, status)

	// A rotated-out refresh token presented again ends its whole line:
	// the live access and refresh tokens are revoked.
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	testkit.AssertOAuthError(t, err, "invalid_grant")
	status, _, _ = restStatus(t, srv, fresh.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "the family is revoked")
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken}).Token()
	testkit.AssertOAuthError(t, err, "invalid_grant")

	// A revoked refresh token takes its access tokens with it.
	verifier = oauth2.GenerateVerifier()
	back = testkit.Authorize(t, srv, cfg.AuthCodeURL("state-43", oauth2.S256ChallengeOption(verifier)))
	again, err := cfg.Exchange(ctx, back.Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	resp, body2 := testkit.Post(t, srv, strings.Replace(cfg.Endpoint.TokenURL, "/token", "/revoke", 1), "application/x-www-form-urlencoded",
		url.Values{"token": {again.RefreshToken}, "client_id": {cfg.ClientID}}.Encode())
	require.Equal(t, http.StatusOK, resp.StatusCode, body2)
	status, _, _ = restStatus(t, srv, again.AccessToken)
	assert.Equal(t, http.StatusUnauthorized, status, "revoked")
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: again.RefreshToken}).Token()
	testkit.AssertOAuthError(t, err, "invalid_grant")
}

// A token issued for one resource (RFC 8707) works there alone: the other
// door answers 401 with WWW-Authenticate error="invalid_token" (RFC 6750),
// as the MCP authorization spec's audience rule asks; a token issued for
// both, or for none in particular, works on both. A refresh keeps the
// binding and may not widen it.
func TestOAuthTokenBoundToItsResource(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual; o.OAuthApprove = 1 })
	ctx := context.Background()
	cfg := testkit.OAuthClient(t, srv)
	token := func(resources ...string) *oauth2.Token {
		t.Helper()
		verifier := oauth2.GenerateVerifier()
		authURL := cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier))
		for _, r := range resources {
			authURL += "&resource=" + url.QueryEscape(r)
		}
		back := testkit.Authorize(t, srv, authURL)
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
	resp, body := testkit.Post(t, srv, cfg.Endpoint.TokenURL, "application/x-www-form-urlencoded", url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {refreshed.RefreshToken}, "client_id": {cfg.ClientID}, "resource": {api}}.Encode())
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "invalid_target")
}
