package oauth

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

// A tenant's codes are bounded: past maxCodesPerTenant its oldest is
// forgotten to make room.
func TestTenantBoundsItsCodes(t *testing.T) {
	r := newRig(t)
	c := &client{ID: "mcl_x"}
	approve := func(code string) {
		r.s.approve(c, code, &grant{clientID: c.ID, workspace: 1, expires: r.env.Eng.Clock().Now().Add(CodeLifetime)})
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for i := range maxCodesPerTenant + 5 {
		approve("k" + strconv.Itoa(i))
	}
	m := r.s.tenants[0].codes
	assert.Len(t, m, maxCodesPerTenant)
	approve("last")
	assert.Len(t, m, maxCodesPerTenant)
	assert.Contains(t, m, "last", "the new one is kept")
	assert.NotContains(t, m, "k5", "the oldest ones went")
	assert.Contains(t, m, "k6")
	assert.Len(t, r.s.codes, maxCodesPerTenant, "and the server forgot them")
	assert.Equal(t, maxCodesPerTenant, r.s.tenants[0].clients[c.ID].live, "each code pending holds the client once")
}

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
