package router

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
	"github.com/mediamock/mediamock/spec"
)

var (
	service    = sync.OnceValues(func() (*contract.Contract, error) { return contract.ParseEmbedded("openapi.json", spec.OpenAPI) })
	controlAPI = sync.OnceValues(func() (*contract.Contract, error) { return contract.ParseEmbedded("control.json", spec.Control) })
)

const caPath = "/_mock/tls/ca.pem"

func newFronts(t *testing.T) (*Fronts, *edge.Env) {
	t.Helper()
	api, err := service()
	require.NoError(t, err)
	eng := testkit.Engine(t)
	env := &edge.Env{Eng: eng, Gate: gate.New(eng), Rules: fault.NewSet(0), API: api,
		Journal: journal.New(100, 4096), Journals: journal.NewRings(10, 4096), Coverage: &journal.Counts{FaultKinds: fault.Kinds()},
		Log: slog.New(slog.DiscardHandler), WallClock: time.Now, Stop: context.Background(),
		Sleep: func(context.Context, time.Duration) {}, MaxBodyBytes: 1 << 20, ListenURL: "http://localhost"}
	plane := &controlplane.Plane{Eng: eng, Rules: env.Rules, Service: api, Document: controlAPI, Journal: env.Journal, Journals: env.Journals,
		Coverage: env.Coverage, WallClock: time.Now, Stop: context.Background()}
	return New(env, Config{Service: spec.OpenAPI, Control: spec.Control, LoadControl: controlAPI, Plane: plane, CAPath: caPath}), env
}

// Each path reaches its front, each front through its own door: the
// journal names the front of the journaled ones.
func TestEachPathReachesItsFront(t *testing.T) {
	f, env := newFronts(t)
	f.CA = []byte("-----BEGIN CERTIFICATE-----\n")
	tests := []struct {
		name, method, path string
		status             int
		header             string // a header the front sets, and part of its value
		value              string
		journal            string // the front the journal names; "" when not journaled
		body               string // part of the front's answer
	}{
		{"the authority", "GET", caPath, 200, "Content-Type", "application/x-pem-file", "", "BEGIN CERTIFICATE"},
		{"the authority takes GET and HEAD", "POST", caPath, 405, "Allow", "GET, HEAD", "", "the certificate authority"},
		{"the dashboard", "GET", "/_mock/ui/", 200, "Content-Type", "text/html", "", "<!doctype html>"},
		{"the control API", "GET", "/_mock/health", 200, "Content-Type", "application/json", "", `"status":"ok"`},
		{"the authorization server", "GET", "/.well-known/oauth-authorization-server", 200, "Content-Type", "application/json", "", `"issuer":"http://localhost"`},
		{"the authorization server's endpoints", "GET", "/oauth/token", 405, "Allow", "POST", "", `"error":"invalid_request"`},
		{"the MCP server", "POST", "/mcp", 401, "WWW-Authenticate", "resource_metadata", "mcp", "missing_credentials"},
		{"the REST API", "GET", "/api/v1/account", 401, "WWW-Authenticate", "Bearer", "rest", "missing_credentials"},
		{"anything else is REST's", "GET", "/nope", 404, "Content-Type", "application/json", "rest", "No operation at GET /nope."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.Journal.Clear()
			req := httptest.NewRequest(tt.method, tt.path, nil)
			req.Host = "localhost"
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, req)
			assert.Equal(t, tt.status, rec.Code, "%.300s", rec.Body)
			assert.Contains(t, rec.Body.String(), tt.body)
			assert.Contains(t, rec.Header().Get(tt.header), tt.value, tt.header)
			assert.NotEmpty(t, rec.Header().Get("X-Request-Id"), "through the edge")
			got := env.Journal.List(journal.Filter{})
			if tt.journal == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tt.journal, got[0].Front)
		})
	}
}

// Without a certificate authority of its own, its path is the control
// API's, which has no such endpoint.
func TestNoAuthorityNoPath(t *testing.T) {
	f, _ := newFronts(t)
	req := httptest.NewRequest("GET", caPath, nil)
	req.Host = "localhost"
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.NotContains(t, rec.Header().Get("Content-Type"), "pem")
}

// The MCP front is made once, on first use.
func TestMCPMadeOnce(t *testing.T) {
	f, _ := newFronts(t)
	assert.Nil(t, f.mcp)
	a, err := f.MCP()
	require.NoError(t, err)
	b, err := f.MCP()
	require.NoError(t, err)
	assert.Same(t, a, b)
}

// The fronts are made with the control plane told to free a deleted
// sandbox's OAuth grants: a client the sandbox alone held is forgotten.
func TestDeletedSandboxFreesItsOAuthGrants(t *testing.T) {
	f, _ := newFronts(t)
	require.NotNil(t, f.plane.SandboxDeleted, "the authorization server hears of a sandbox deleted")
	sb, err := f.plane.CreateSandbox(sim.SandboxSpec{})
	require.NoError(t, err)
	send := func(path, ctype, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Host = "localhost"
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, req)
		return rec
	}
	rec := send("/oauth/register", "application/json", `{"redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	id := testkit.JSON(t, rec.Body.String())["client_id"].(string)
	form := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"},
		"workspace": {"sandbox"}, "credential": {sb.ControlToken}, "grant": {"read"}, "decision": {"approve"}}
	rec = send("/oauth/authorize", "application/x-www-form-urlencoded", form.Encode())
	require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)

	require.NoError(t, f.plane.DeleteSandbox(sb.ID))
	rec = send("/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"authorization_code"}, "client_id": {id},
		"code": {loc.Query().Get("code")}, "code_verifier": {"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"},
		"redirect_uri": {"http://127.0.0.1:9/cb"}}.Encode())
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s", rec.Body)
	assert.Equal(t, "invalid_client", testkit.JSON(t, rec.Body.String())["error"])
}
