package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestDashboardOAuthConsentInBrowser: a person on the authorization
// server's consent page, in Chromium, picks a workspace, leaves a scope
// out and approves; the browser lands on the client's redirect URI with a
// code, which buys a token for that workspace and scope alone.
func TestDashboardOAuthConsentInBrowser(t *testing.T) {
	srv := mediamock.RunT(t)
	backs := make(chan url.Values, 1)
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case backs <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>back</title><p id="back">back at the client</p>`))
	}))
	t.Cleanup(client.Close)
	redirect := client.URL + "/callback"

	resp, err := http.Post(srv.URL()+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"Desktop agent","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`))
	require.NoError(t, err)
	var reg struct {
		ClientID string `json:"client_id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&reg))
	resp.Body.Close()
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: []string{"read", "generate"},
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL() + "/oauth/authorize", TokenURL: srv.URL() + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()

	b := newBrowser(t)
	b.do("open the consent page", chromedp.Navigate(cfg.AuthCodeURL("state-7", oauth2.S256ChallengeOption(verifier))))
	b.visible("the consent page", `button[value="approve"]`)
	b.screenshot("oauth-consent")
	b.click("choose Pixel Garage", `input[name="workspace"][value="2"]`)
	b.click("leave generate out", `input[name="grant"][value="generate"]`)
	b.click("approve", `button[value="approve"]`)
	back := testkit.Receive(t, backs, "the browser back at the client with a code")
	b.visible("the client's page", `#back`)
	b.noConsoleErrors()
	assert.Equal(t, "state-7", back.Get("state"))
	require.NotEmpty(t, back.Get("code"), "%v", back)

	tok, err := cfg.Exchange(context.Background(), back.Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	assert.Equal(t, "read", tok.Extra("scope"))
	status, account, _ := testkit.REST(t, srv, tok.AccessToken, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, 2, account["workspace_id"])
}
