package gate_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestChallengesFollowRFC6750: a refusal for the credential carries the
// Bearer challenge RFC 6750 describes, on REST and MCP alike: no error code
// when no bearer token was sent, invalid_token for an unknown one, and
// insufficient_scope with the scope required for a token without it.
func TestChallengesFollowRFC6750(t *testing.T) {
	srv := mediamock.RunT(t)
	const bare, invalid = `Bearer realm="api"`, `Bearer realm="api", error="invalid_token"`
	mcpInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, door := range []struct{ method, path, body string }{
		{"GET", mediamock.BasePath + "/account", ""},
		{"POST", "/mcp", mcpInit},
	} {
		for _, tc := range []struct{ authorization, challenge string }{
			{"", bare},
			{"Basic dXNlcjpwYXNz", bare},
			{"Bearer", bare},
			{"Bearer mk_no_such_key", invalid},
		} {
			header := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
			if tc.authorization != "" {
				header["Authorization"] = tc.authorization
			}
			resp, body := testkit.Send(t, srv, door.method, door.path, "", header, door.body)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %q: %s", door.path, tc.authorization, body)
			want := tc.challenge
			if door.path == "/mcp" { // MCP clients find the authorization server from here
				want += `, resource_metadata="` + srv.URL() + `/.well-known/oauth-protected-resource/mcp"`
			}
			assert.Equal(t, want, resp.Header.Get("WWW-Authenticate"), "%s %q", door.path, tc.authorization)
		}
	}
	resp, body := testkit.Send(t, srv, "POST", mediamock.BasePath+"/generations", "",
		map[string]string{"Authorization": "Bearer " + mediamock.KeyReadOnly, "Content-Type": "application/json"},
		`{"modality":"image","model_id":"imagen-4","prompt":"a fox"}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	assert.Equal(t, `Bearer realm="api", error="insufficient_scope", scope="generate"`, resp.Header.Get("WWW-Authenticate"))
}
