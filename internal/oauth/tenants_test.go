package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/sim"
)

// from serves a request of /oauth/* from remote (an address and port):
// form, when set, is a form body, else body is JSON.
func (r *rig) from(remote, method, target string, form url.Values, body string) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, strings.NewReader(body))
	}
	req.Host, req.RemoteAddr = "localhost", remote
	rec := httptest.NewRecorder()
	r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
	return rec
}

// registerFrom registers a public client from remote and returns its id.
func (r *rig) registerFrom(t *testing.T, remote string) string {
	t.Helper()
	rec := r.from(remote, "POST", RegisterPath, nil, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	var out struct {
		ID string `json:"client_id"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out.ID
}

// approveFrom approves a client's request for the sandbox of a control
// token, from remote, and returns the code.
func (r *rig) approveFrom(t *testing.T, remote, clientID, controlToken string) string {
	t.Helper()
	rec := r.from(remote, "POST", AuthorizePath, consentForm(clientID, sandboxChoice, controlToken), "")
	require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	require.NotEmpty(t, loc.Query().Get("code"), "%s", loc)
	return loc.Query().Get("code")
}

// exchange trades a code of a public client for tokens, from remote.
func (r *rig) exchange(t *testing.T, remote, clientID, code string) (int, map[string]any) {
	t.Helper()
	rec := r.from(remote, "POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID},
		"code": {code}, "code_verifier": {verifier}, "redirect_uri": {callback}}, "")
	return rec.Code, oauthAnswer(t, rec)
}

// One suite that registers and approves 256 clients in its sandbox (and
// more) leaves another suite on the same address free to register and be
// approved in its own: what a grant holds counts against its tenant, and
// past its tenant's bound a tenant's own oldest client goes.
func TestOneTenantCannotLockOutAnother(t *testing.T) {
	r := newRig(t)
	hog, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Hog"}, 0)
	require.NoError(t, err)
	other, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Other"}, 0)
	require.NoError(t, err)
	const hogConn, otherConn = "127.0.0.1:50001", "127.0.0.1:50002"

	type pending struct{ id, code string }
	var held []pending
	for range maxClientsPerTenant {
		id := r.registerFrom(t, hogConn)
		held = append(held, pending{id, r.approveFrom(t, hogConn, id, hog.ControlToken)})
	}

	id := r.registerFrom(t, otherConn) // 429 "at most 256 from one address" before
	status, out := r.exchange(t, otherConn, id, r.approveFrom(t, otherConn, id, other.ControlToken))
	require.Equal(t, http.StatusOK, status, "%v", out)
	p, ok := r.env.Eng.Authenticate(out["access_token"].(string))
	require.True(t, ok)
	assert.Equal(t, other.WorkspaceID, p.WorkspaceID)
	assert.Equal(t, http.StatusCreated, r.from("127.0.0.1:50003", "POST", RegisterPath, nil,
		`{"redirect_uris":["`+callback+`"]}`).Code, "a third suite registers too")

	// The hog's 257th client takes the place of its own oldest.
	extra := r.registerFrom(t, hogConn)
	r.approveFrom(t, hogConn, extra, hog.ControlToken)
	status, out = r.exchange(t, hogConn, held[0].id, held[0].code)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_grant", out["error"], "the hog's oldest code went: %v", out)
	status, out = r.exchange(t, hogConn, held[1].id, held[1].code)
	assert.Equal(t, http.StatusOK, status, "the others stay: %v", out)

	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	assert.Len(t, r.s.tenants[hog.WorkspaceID].clients, maxClientsPerTenant)
	assert.Len(t, r.s.tenants[other.WorkspaceID].clients, 1, "the other sandbox holds its own client")
	assert.Equal(t, 1, r.s.tenants[other.WorkspaceID].clients[id].live)
	assert.NotNil(t, r.s.clients[held[0].id], "let go by its tenant, the client is idle, not forgotten")
	assert.Equal(t, 0, r.s.clients[held[0].id].tenants)
}

// A tenant's lines of tokens are bounded: past maxLinesPerTenant its
// oldest line ends and its tokens are revoked; another tenant's stay.
func TestTenantBoundsItsLines(t *testing.T) {
	r := newRig(t)
	r.s.RateLimit = 1 << 20
	sb, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Lines"}, 0)
	require.NoError(t, err)
	id, _ := r.client(t, "none")
	theirs := r.code(t, id, nil) // the server's workspace 1
	status, server := r.exchange(t, "192.0.2.1:1", id, theirs)
	require.Equal(t, http.StatusOK, status, "%v", server)

	var first map[string]any
	for i := range maxLinesPerTenant + 1 {
		if i == maxLinesPerTenant {
			r.s.mu.Lock()
			assert.Len(t, r.s.tenants[sb.WorkspaceID].families, maxLinesPerTenant)
			r.s.mu.Unlock()
		}
		status, out := r.exchange(t, "192.0.2.1:1", id, r.approveFrom(t, "192.0.2.1:1", id, sb.ControlToken))
		require.Equal(t, http.StatusOK, status, "%v", out)
		if i == 0 {
			first = out
		}
	}
	r.s.mu.Lock()
	assert.Len(t, r.s.tenants[sb.WorkspaceID].families, maxLinesPerTenant)
	assert.Len(t, r.s.tenants[0].families, 1)
	r.s.mu.Unlock()
	_, ok := r.env.Eng.Authenticate(first["access_token"].(string))
	assert.False(t, ok, "the oldest line ended, its access token revoked")
	_, ok = r.env.Eng.Authenticate(server["access_token"].(string))
	assert.True(t, ok, "another tenant's line lives on")
	rec := r.do("POST", TokenPath, url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {first["refresh_token"].(string)}}, nil)
	assert.Equal(t, "invalid_grant", oauthAnswer(t, rec)["error"], "and its refresh token")
}

// A deleted sandbox's clients, codes and tokens are freed at once
// (ForgetSandbox, which the control plane calls); a client another tenant
// holds too stays. A sandbox gone another way is forgotten at the next
// request of /oauth/*.
func TestDeletedSandboxIsFreed(t *testing.T) {
	r := newRig(t)
	r.s.RateLimit = 1 << 20
	sb, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Gone"}, 0)
	require.NoError(t, err)
	const conn = "127.0.0.1:50001"
	var alone []string
	var refresh string
	for i := range 3 {
		id := r.registerFrom(t, conn)
		alone = append(alone, id)
		code := r.approveFrom(t, conn, id, sb.ControlToken)
		if i > 0 {
			status, out := r.exchange(t, conn, id, code)
			require.Equal(t, http.StatusOK, status, "%v", out)
			refresh = out["refresh_token"].(string)
		}
	}
	shared := r.registerFrom(t, conn)
	r.approveFrom(t, conn, shared, sb.ControlToken)
	r.code(t, shared, nil) // in the server's workspace 1 too
	var idle []string      // the address's idle clients, as many as it may have
	for range maxClientsPerAddress {
		idle = append(idle, r.registerFrom(t, conn))
	}

	r.s.mu.Lock()
	require.Len(t, r.s.tenants[sb.WorkspaceID].clients, 4)
	r.s.mu.Unlock()
	require.NoError(t, r.env.Eng.DeleteSandbox(sb.ID))
	r.s.ForgetSandbox(sb.WorkspaceID)

	r.s.mu.Lock()
	assert.NotContains(t, r.s.tenants, sb.WorkspaceID)
	for _, id := range alone {
		assert.NotContains(t, r.s.clients, id, "a client the sandbox alone held is forgotten")
	}
	assert.Contains(t, r.s.clients, shared, "one the server's workspace holds too stays")
	assert.Len(t, r.s.codes, 1, "the sandbox's codes are forgotten, the server's stays")
	assert.NotContains(t, r.s.refresh, refresh)
	assert.Empty(t, r.s.access)
	assert.Equal(t, 1, r.s.clients[shared].tenants)
	assert.Equal(t, maxClientsPerAddress, r.s.idleFrom["127.0.0.1"], "none of them is left idle")
	for _, id := range idle {
		assert.Contains(t, r.s.clients, id, "the address's idle clients are not crowded out by the ones freed")
	}
	r.s.mu.Unlock()

	// A sandbox gone without a word: forgotten at the next request.
	later, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Later"}, 0)
	require.NoError(t, err)
	id := r.registerFrom(t, conn)
	r.approveFrom(t, conn, id, later.ControlToken)
	require.NoError(t, r.env.Eng.DeleteSandbox(later.ID))
	r.from(conn, "POST", RevokePath, url.Values{"client_id": {"nobody"}, "token": {"x"}}, "")
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	assert.NotContains(t, r.s.tenants, later.WorkspaceID)
	assert.NotContains(t, r.s.clients, id)
}

// On loopback every suite shares 127.0.0.1: the rate limit counts a
// request that proves its tenant (a consent's control token, a code or a
// token) in that tenant's window, and one that proves none in its
// connection's; from another address, in the address's. One window full
// stops no other.
func TestRateLimitIsPerTenantOnLoopback(t *testing.T) {
	r := newRig(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.env.WallClock = func() time.Time { return now }
	a, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "A"}, 0)
	require.NoError(t, err)
	b, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "B"}, 0)
	require.NoError(t, err)
	const hog, suite = "127.0.0.1:50001", "127.0.0.1:50002"
	idA := r.registerFrom(t, hog)
	idB := r.registerFrom(t, suite)
	now = now.Add(time.Minute) // windows afresh
	r.s.RateLimit = 5
	anonymous := func(remote string) int {
		return r.from(remote, "POST", RevokePath, url.Values{"client_id": {"nobody"}, "token": {"x"}}, "").Code
	}
	consent := func(remote, id, token string) int {
		return r.from(remote, "POST", AuthorizePath, consentForm(id, sandboxChoice, token), "").Code
	}
	for range 5 {
		require.Equal(t, http.StatusUnauthorized, anonymous(hog))
		require.Equal(t, http.StatusFound, consent(hog, idA, a.ControlToken))
	}
	rec := r.from(hog, "POST", RevokePath, url.Values{"client_id": {"nobody"}, "token": {"x"}}, "")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Contains(t, oauthAnswer(t, rec)["error_description"], hog+" (this connection)")
	rec = r.from(hog, "POST", AuthorizePath, consentForm(idA, sandboxChoice, a.ControlToken), "")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, "sandbox A's window is full")
	assert.Contains(t, oauthAnswer(t, rec)["error_description"], "sandbox of workspace")
	assert.Equal(t, http.StatusTooManyRequests, consent(suite, idA, a.ControlToken), "on every connection")

	assert.Equal(t, http.StatusUnauthorized, anonymous(suite), "another connection is served")
	code := r.approveFrom(t, hog, idB, b.ControlToken) // sandbox B's window, even on the hog's connection
	status, out := r.exchange(t, hog, idB, code)
	assert.Equal(t, http.StatusOK, status, "a code proves its tenant: %v", out)

	// Beyond loopback the address is the window of what proves no tenant.
	for range 5 {
		require.Equal(t, http.StatusUnauthorized, anonymous("192.0.2.9:1"))
	}
	assert.Equal(t, http.StatusTooManyRequests, anonymous("192.0.2.9:2"), "another port of the same address")
	assert.Equal(t, http.StatusFound, consent("192.0.2.9:2", idB, b.ControlToken), "a tenant's window at that address")

	now = now.Add(time.Minute)
	assert.Equal(t, http.StatusFound, consent(suite, idA, a.ControlToken), "the next minute")
}
