package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/sim"
)

// consentForm is the consent page's answer for a client: approve, for
// choice (a workspace id, "sandbox" or ""), with credential.
func consentForm(clientID, choice, credential string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st"},
		"workspace": {choice}, "credential": {credential}, "grant": {"read", "generate", "publish"}, "decision": {"approve"}}
}

// Approving a consent needs a credential whenever the server is not an
// open local one: the server's control token when it has one, a sandbox's
// own control token for a sandbox (which reaches its own workspace alone).
// A refusal issues nothing; the page never lists a sandbox.
func TestConsentNeedsACredential(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run("control token "+strconv.FormatBool(closed), func(t *testing.T) {
			r := newRig(t)
			if closed {
				r.env.ControlToken = "the-operators-token"
			}
			mine, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Mine"}, 0)
			require.NoError(t, err)
			theirs, err := r.env.Eng.CreateSandbox(sim.SandboxSpec{Name: "Secret Project Theirs"}, 0)
			require.NoError(t, err)
			id, _ := r.client(t, "none")

			q := consentForm(id, "", "")
			for _, k := range []string{"workspace", "credential", "grant", "decision"} {
				q.Del(k)
			}
			page := r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
			require.Equal(t, http.StatusOK, page.Code)
			body := page.Body.String()
			assert.Contains(t, body, `type="password" name="credential"`)
			assert.Contains(t, body, callback, "the page names where the code goes")
			assert.NotContains(t, body, "Secret Project Theirs", "a sandbox's name is never shown")
			assert.NotContains(t, body, `value="`+strconv.FormatUint(theirs.WorkspaceID, 10)+`"`)

			refused := func(name string, form url.Values) {
				t.Run(name, func(t *testing.T) {
					rec := r.do("POST", AuthorizePath, form, nil)
					assert.Equal(t, http.StatusForbidden, rec.Code, "%s", rec.Body)
					assert.Empty(t, rec.Header().Get("Location"), "nothing goes to the client")
					assert.Contains(t, rec.Body.String(), `class="problem"`)
				})
			}
			code := func(name string, form url.Values, ws uint64) {
				t.Run(name, func(t *testing.T) {
					rec := r.do("POST", AuthorizePath, form, nil)
					require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
					loc, _ := url.Parse(rec.Header().Get("Location"))
					c := loc.Query().Get("code")
					require.NotEmpty(t, c, "%s", loc)
					out := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id},
						"code": {c}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
					p, ok := r.env.Eng.Authenticate(out["access_token"].(string))
					require.True(t, ok, "%v", out)
					assert.Equal(t, ws, p.WorkspaceID, "the token is worth that workspace alone")
				})
			}
			other := strconv.FormatUint(theirs.WorkspaceID, 10)
			refused("another sandbox's workspace without a credential", consentForm(id, other, ""))
			refused("another sandbox's workspace with my sandbox's token", consentForm(id, other, mine.ControlToken))
			refused("a sandbox without its token", consentForm(id, "sandbox", ""))
			refused("a made-up sandbox token", consentForm(id, "sandbox", "sbc_1_0123456789abcdef"))
			code("my sandbox with its token", consentForm(id, "sandbox", mine.ControlToken), mine.WorkspaceID)
			if closed {
				refused("a workspace without the server's token", consentForm(id, "1", ""))
				refused("a workspace with a wrong token", consentForm(id, "1", "not-the-token"))
				refused("a workspace with a sandbox's token", consentForm(id, "1", mine.ControlToken))
				code("a workspace with the server's token", consentForm(id, "1", "the-operators-token"), 1)
				code("a sandbox with the server's token", consentForm(id, other, "the-operators-token"), theirs.WorkspaceID)
			} else {
				refused("a workspace with a made-up token", consentForm(id, "1", "not-a-token"))
				code("a workspace of an open local server", consentForm(id, "1", ""), 1)
			}
		})
	}
}

// A client that registered a scope may ask for no more; asking nothing
// gives its registered scope.
func TestRegisteredScopeIsEnforced(t *testing.T) {
	r := newRig(t)
	rec, out := r.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none","scope":"read"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	id := out["client_id"].(string)
	r.s.Approve = 1
	q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {callback},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"read generate"}}
	back := r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
	require.Equal(t, http.StatusFound, back.Code)
	loc, _ := url.Parse(back.Header().Get("Location"))
	assert.Equal(t, "invalid_scope", loc.Query().Get("error"), "%s", loc)
	assert.Empty(t, loc.Query().Get("code"))

	tok := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id},
		"code": {r.code(t, id, nil)}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
	assert.Equal(t, "read", tok["scope"], "no scope asked: the registered one")
}

// Registrations are bounded per client address: past the bound the oldest
// client that holds nothing live goes, never one with a live token or a
// pending code; when every one is in use, the registration is refused.
func TestRegistrationsAreBoundedPerAddress(t *testing.T) {
	r := newRig(t)
	reg := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", RegisterPath, strings.NewReader(`{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none"}`))
		req.Host, req.RemoteAddr = "localhost", addr+":40000"
		rec := httptest.NewRecorder()
		r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
		return rec
	}
	// A victim's client, in use, from the same address as the flood.
	victim, _ := r.client(t, "none") // from httptest's 192.0.2.1
	code := r.code(t, victim, nil)
	for range maxClientsPerAddress + 50 {
		require.Equal(t, http.StatusCreated, reg("192.0.2.1").Code)
	}
	r.s.mu.Lock()
	from := 0
	for _, c := range r.s.clients {
		if c.addr == "192.0.2.1" {
			from++
		}
	}
	_, kept := r.s.clients[victim]
	r.s.mu.Unlock()
	assert.Equal(t, maxClientsPerAddress, from)
	assert.True(t, kept, "a client with a pending code is never evicted")
	out := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {victim},
		"code": {code}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
	assert.Contains(t, out, "access_token", "%v", out)
	assert.Equal(t, http.StatusCreated, reg("198.51.100.7").Code, "another address is not crowded out")

	// When every client of the address is in use, registering is refused.
	r.s.mu.Lock()
	for _, c := range r.s.clients {
		if c.addr == "192.0.2.1" {
			r.s.codes["oac_"+c.ID] = &grant{clientID: c.ID, expires: r.env.Eng.Clock().Now().Add(CodeLifetime)}
		}
	}
	r.s.mu.Unlock()
	rec := reg("192.0.2.1")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "rate_limited", oauthAnswer(t, rec)["error"])
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
}

// /oauth/* is rate limited per client address on the wall clock: past the
// limit, 429 rate_limited with Retry-After; another address, or the next
// minute, is served.
func TestOAuthIsRateLimited(t *testing.T) {
	r := newRig(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.env.WallClock = func() time.Time { return now }
	r.s.RateLimit = 5
	send := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", RevokePath, strings.NewReader("token=x&client_id=nobody"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Host, req.RemoteAddr = "localhost", addr+":1234"
		rec := httptest.NewRecorder()
		r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
		return rec
	}
	for range 5 {
		assert.Equal(t, http.StatusUnauthorized, send("192.0.2.9").Code, "an unknown client, but served")
	}
	now = now.Add(20 * time.Second)
	rec := send("192.0.2.9")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "40", rec.Header().Get("Retry-After"))
	assert.Equal(t, "rate_limited", oauthAnswer(t, rec)["error"])
	assert.Equal(t, http.StatusUnauthorized, send("192.0.2.10").Code, "another address")
	assert.Equal(t, http.StatusOK, r.do("GET", ServerMetadataPath, nil, nil).Code, "metadata is not limited")
	now = now.Add(40 * time.Second)
	assert.Equal(t, http.StatusUnauthorized, send("192.0.2.9").Code, "the next minute")
}

// On the manual clock nothing piles up: a refresh revokes the access token
// it supersedes, and once the simulated clock passes an expiry the next
// request of the authorization server purges what expired.
func TestTokensArePurgedOnTheManualClock(t *testing.T) {
	r := newRig(t)
	require.Equal(t, sim.ClockManual, r.env.Eng.Clock().Mode())
	id, _ := r.client(t, "none")
	first := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id},
		"code": {r.code(t, id, nil)}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
	access, rt := []string{first["access_token"].(string)}, first["refresh_token"].(string)
	for range 5 {
		next := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {rt}}, nil))
		access, rt = append(access, next["access_token"].(string)), next["refresh_token"].(string)
	}
	for i, tok := range access {
		_, ok := r.env.Eng.Authenticate(tok)
		assert.Equal(t, i == len(access)-1, ok, "only the last access token lives (%d)", i)
	}

	once, _ := r.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none","grant_types":["authorization_code"]}`)
	onceID := oauthAnswer(t, once)["client_id"].(string)
	for range 3 {
		out := oauthAnswer(t, r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {onceID},
			"code": {r.code(t, onceID, nil)}, "code_verifier": {verifier}, "redirect_uri": {callback}}, nil))
		require.NotContains(t, out, "refresh_token")
	}
	_, err := r.env.Eng.Advance(AccessTokenLifetime)
	require.NoError(t, err)
	r.do("GET", RegisterPath, nil, nil) // any request of /oauth/*
	n, err := r.env.Eng.PurgeAllExpiredTokens()
	require.NoError(t, err)
	assert.Zero(t, n, "the request purged every expired token")
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	assert.Len(t, r.s.families, 1, "the families without a refresh token ended with their access tokens")
	assert.Empty(t, r.s.codes, "used codes past their life are forgotten")
}
