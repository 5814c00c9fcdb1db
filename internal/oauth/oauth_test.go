package oauth

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/testkit"
)

const (
	root     = "http://localhost"
	callback = "http://127.0.0.1:9/cb"
	verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk" // RFC 7636, appendix B
)

// challenge is the S256 challenge of verifier (RFC 7636, appendix B).
const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

func TestServes(t *testing.T) {
	for path, want := range map[string]bool{
		"/oauth/token": true, "/oauth/anything": true, ServerMetadataPath: true, ResourceMetadataPath: true,
		ResourceMetadataPath + "/mcp": true, "/.well-known/openid-configuration": true,
		"/oauth": false, "/.well-known/other": false, ResourceMetadataPath + "x": false, "/mcp": false, "/api/v1/account": false,
	} {
		t.Run(path, func(t *testing.T) { assert.Equal(t, want, Serves(httptest.NewRequest("GET", path, nil))) })
	}
}

// rig is an authorization server over a fresh engine on a manual clock.
type rig struct {
	s   *Server
	env *edge.Env
}

func newRig(t *testing.T) *rig {
	t.Helper()
	eng := testkit.Engine(t)
	env := &edge.Env{Eng: eng, Gate: gate.New(eng), Rules: fault.NewSet(0), Log: slog.New(slog.DiscardHandler),
		WallClock: time.Now, Stop: context.Background(), MaxBodyBytes: 1 << 20, ListenURL: root}
	return &rig{s: New(env), env: env}
}

// do serves a request from a local client; form, when set, is the body.
func (r *rig) do(method, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Host = "localhost"
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
	return rec
}

func (r *rig) register(t *testing.T, metadata string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("POST", RegisterPath, strings.NewReader(metadata))
	req.Host = "localhost"
	rec := httptest.NewRecorder()
	r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec, out
}

// client registers a client and returns its id and secret.
func (r *rig) client(t *testing.T, authMethod string) (id, secret string) {
	t.Helper()
	rec, out := r.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"`+authMethod+`"}`)
	require.Equal(t, http.StatusCreated, rec.Code, "%s", rec.Body)
	secret, _ = out["client_secret"].(string)
	return out["client_id"].(string), secret
}

// code gets an authorization code for the client (approved at once for
// workspace 1) with the given extra parameters.
func (r *rig) code(t *testing.T, clientID string, extra url.Values) string {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st"}}
	for k, v := range extra {
		q[k] = v
	}
	r.s.Approve = 1
	rec := r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
	require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "st", loc.Query().Get("state"))
	assert.Equal(t, root, loc.Query().Get("iss"), "RFC 9207")
	require.NotEmpty(t, loc.Query().Get("code"), "%s", loc)
	return loc.Query().Get("code")
}

// oauthAnswer reads an answer of the token or revocation endpoint.
func oauthAnswer(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	out := map[string]any{}
	if rec.Body.Len() > 0 {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "%s", rec.Body)
	}
	return out
}

// Every endpoint of the authorization server refuses a repeated parameter
// with invalid_request and issues nothing (RFC 6749, 3.1 and 3.2): sent
// back to the client's redirect URI when that and the client are sound,
// else answered. resource may be repeated (RFC 8707).
func TestRepeatedParametersAreRefused(t *testing.T) {
	r := newRig(t)
	id, _ := r.client(t, "none")
	r.s.Approve = 1
	authorize := func(extra url.Values) *httptest.ResponseRecorder {
		q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {callback},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st"}}
		for k, v := range extra {
			q[k] = v
		}
		return r.do("GET", AuthorizePath+"?"+q.Encode(), nil, nil)
	}
	for _, name := range []string{"code_challenge", "response_type", "scope", "state", "code_challenge_method"} {
		t.Run("authorize "+name, func(t *testing.T) {
			q := url.Values{"response_type": {"code"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"read"}, "state": {"st"}}
			extra := url.Values{name: {q.Get(name), q.Get(name)}}
			rec := authorize(extra)
			require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
			loc, err := url.Parse(rec.Header().Get("Location"))
			require.NoError(t, err)
			assert.Equal(t, "invalid_request", loc.Query().Get("error"), "%s", loc)
			assert.Contains(t, loc.Query().Get("error_description"), name)
			assert.Empty(t, loc.Query().Get("code"), "no code is issued")
		})
	}
	for _, name := range []string{"client_id", "redirect_uri"} {
		t.Run("authorize "+name, func(t *testing.T) {
			v := map[string]string{"client_id": id, "redirect_uri": callback}[name]
			rec := authorize(url.Values{name: {v, v}})
			assert.Equal(t, http.StatusBadRequest, rec.Code, "not sent to a redirect URI it cannot trust")
			assert.Equal(t, "invalid_request", oauthAnswer(t, rec)["error"])
			assert.Empty(t, rec.Header().Get("Location"))
		})
	}
	t.Run("authorize resource twice", func(t *testing.T) {
		rec := authorize(url.Values{"resource": {root + "/mcp", root + "/api/v1"}})
		require.Equal(t, http.StatusFound, rec.Code, "%s", rec.Body)
		loc, _ := url.Parse(rec.Header().Get("Location"))
		assert.NotEmpty(t, loc.Query().Get("code"), "RFC 8707 lets a client name several resources: %s", loc)
	})

	code := r.code(t, id, nil)
	for _, tc := range []struct {
		name, path string
		form       url.Values
	}{
		{"token: code", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code, code},
			"code_verifier": {verifier}, "redirect_uri": {callback}}},
		{"token: grant_type", TokenPath, url.Values{"grant_type": {"authorization_code", "authorization_code"}, "client_id": {id}, "code": {code},
			"code_verifier": {verifier}, "redirect_uri": {callback}}},
		{"revoke: token", RevokePath, url.Values{"client_id": {id}, "token": {"x", "y"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := r.do("POST", tc.path, tc.form, nil)
			assert.Equal(t, http.StatusBadRequest, rec.Code, "%s", rec.Body)
			out := oauthAnswer(t, rec)
			assert.Equal(t, "invalid_request", out["error"])
			assert.Nil(t, out["access_token"], "nothing is issued")
		})
	}
	// The code was not spent by the refused requests: it still works once.
	rec := r.do("POST", TokenPath, url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code},
		"code_verifier": {verifier}, "redirect_uri": {callback}}, nil)
	assert.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
}
