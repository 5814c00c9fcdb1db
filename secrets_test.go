package mediamock_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// secretForm is how a credential the server makes up looks: its prefix and
// number, then 128 random bits.
var secretForm = regexp.MustCompile(`^(sbc_|mk_sbx|oat_sbx|mk_test_ws|mk_test_key|oat_test_token)[0-9]+_[0-9a-f]{32}$`)

// oauthAccess runs the authorization code flow (auto-approved) and
// returns the tokens.
func oauthAccess(t *testing.T, srv *mediamock.Server) *oauth2.Token {
	t.Helper()
	cfg := testkit.OAuthClient(t, srv)
	verifier := oauth2.GenerateVerifier()
	back := testkit.Authorize(t, srv, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	tok, err := cfg.Exchange(context.Background(), back.Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	return tok
}

// Secrets are random; everything else is seeded. Two servers of the same
// seed make the same ids but different sandbox control tokens and keys,
// run-time keys and OAuth tokens; none has the form of the old derivation
// from the seed, so none can be worked out from the seed or from another.
func TestSecretsAreRandom(t *testing.T) {
	open := func() *mediamock.Server {
		return mediamock.RunT(t, func(o *mediamock.Options) {
			o.Clock, o.OAuthApprove, o.ControlToken, o.FileSecret = mediamock.ClockManual, 1, "operator", "file secret"
		})
	}
	a, b := open(), open()
	sa, err := a.NewSandbox(mediamock.SandboxSpec{})
	require.NoError(t, err)
	sb, err := b.NewSandbox(mediamock.SandboxSpec{})
	require.NoError(t, err)
	assert.Equal(t, sa.ID, sb.ID, "ids are seeded")
	assert.NotEqual(t, sa.ControlToken, sb.ControlToken)
	assert.Regexp(t, secretForm, sa.ControlToken)
	require.NotEmpty(t, sa.Keys)
	for name, key := range sa.Keys {
		assert.NotEqual(t, key, sb.Keys[name], name)
		assert.Regexp(t, secretForm, key, name)
	}
	ta, tb := oauthAccess(t, a), oauthAccess(t, b)
	assert.NotEqual(t, ta.AccessToken, tb.AccessToken)
	assert.NotEqual(t, ta.RefreshToken, tb.RefreshToken)
	assert.Regexp(t, secretForm, ta.AccessToken)

	wa := testkit.JSON(t, controlOK(t, a, "POST", "/workspaces", `{"name":"w"}`))
	wb := testkit.JSON(t, controlOK(t, b, "POST", "/workspaces", `{"name":"w"}`))
	assert.NotEqual(t, wa["token"], wb["token"])
	assert.Regexp(t, secretForm, wa["token"])

	// The control token the seed used to give sandbox 1 reaches nothing.
	status, body := testkit.Control(t, a, "GET", "/sandboxes/"+sa.ID, "", "Authorization", "Bearer sbc_1_c749dfcb6aeeabe2")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = testkit.Control(t, a, "GET", "/sandboxes/"+sa.ID, "", "Authorization", "Bearer "+sa.ControlToken)
	assert.Equal(t, http.StatusOK, status, body)
}

func controlOK(t *testing.T, srv *mediamock.Server, method, path, body string) string {
	t.Helper()
	status, out := testkit.Control(t, srv, method, path, body, "Authorization", "Bearer operator")
	require.Less(t, status, 300, out)
	return out
}

// Random credentials are kept in the state file: a restart on the same
// file keeps a sandbox's control token and keys, a run-time key and an
// OAuth access token valid; a sandbox reset keeps its keys.
func TestSecretsSurviveARestart(t *testing.T) {
	path := t.TempDir() + "/state.db"
	open := func() *mediamock.Server {
		srv, err := mediamock.New(mediamock.Options{DBPath: path, Clock: mediamock.ClockManual, OAuthApprove: 1, ControlToken: "operator"})
		require.NoError(t, err)
		return srv
	}
	srv := open()
	sb, err := srv.NewSandbox(mediamock.SandboxSpec{})
	require.NoError(t, err)
	ws := testkit.JSON(t, controlOK(t, srv, "POST", "/workspaces", `{"name":"w"}`))
	tok := oauthAccess(t, srv)
	require.NoError(t, srv.Close())

	srv = open()
	t.Cleanup(func() { srv.Close() })
	for _, key := range []string{sb.APIKey, ws["token"].(string), tok.AccessToken} {
		status, body, _ := testkit.REST(t, srv, key, "GET", "/account", nil)
		assert.Equal(t, http.StatusOK, status, "%v", body)
	}
	status, body := testkit.Control(t, srv, "POST", "/sandboxes/"+sb.ID+"/reset", "{}", "Authorization", "Bearer "+sb.ControlToken)
	require.Equal(t, http.StatusOK, status, body)
	status, account, _ := testkit.REST(t, srv, sb.APIKey, "GET", "/account", nil)
	assert.Equal(t, http.StatusOK, status, "a reset keeps the keys: %v", account)
	assert.EqualValues(t, sb.WorkspaceID, account["workspace_id"])
}
