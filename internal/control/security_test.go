package control_test

// What keeps the control API from pages of other sites and from the
// network: the Host and Origin guards, the token an exposed listener needs
// for snapshots, and refused snapshots.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// A web page must not drive the control API: not through DNS rebinding (a
// foreign Host), not cross-site (a foreign Origin), not with a bodyless
// POST that needs no preflight.
func TestControlAPIRefusesWebPages(t *testing.T) {
	srv := mediamock.RunT(t)
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name, method, path, host string
		hdr                      map[string]string
		status                   int
		code                     string
	}{
		{"rebound host reads the snapshot", "GET", "/_mock/snapshot", "evil.example", nil, 403, "forbidden_host"},
		{"rebound host resets", "POST", "/_mock/reset", "evil.example:8080", json, 403, "forbidden_host"},
		{"foreign origin resets", "POST", "/_mock/reset", "", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"null origin resets", "POST", "/_mock/reset", "", map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403, "forbidden_origin"},
		{"bodyless form post resets", "POST", "/_mock/reset", "", nil, 415, "unsupported_media_type"},
		{"text/plain post adds credits", "POST", "/_mock/workspaces/1/credits", "", map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"bodyless delete clears faults", "DELETE", "/_mock/faults", "", nil, 415, "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := testkit.Send(t, srv, tt.method, tt.path, tt.host, tt.hdr, "")
			assert.Equal(t, tt.status, resp.StatusCode, body)
			assert.Equal(t, tt.code, testkit.ErrorCode(t, body))
			assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "no permissive CORS")
		})
	}
	// What is allowed: loopback names, the same origin, JSON.
	for _, host := range []string{"", "localhost:8080", "[::1]:8080", "127.0.0.2"} {
		resp, body := testkit.Send(t, srv, "POST", "/_mock/reset", host, map[string]string{"Content-Type": "application/json", "Origin": "http://" + strings.TrimPrefix(srv.URL(), "http://")}, "")
		if host != "" { // the Origin only matches the default host
			resp, body = testkit.Send(t, srv, "POST", "/_mock/reset", host, json, "")
		}
		assert.Equal(t, 200, resp.StatusCode, "%s: %s", host, body)
	}
	resp, _ := testkit.Send(t, srv, "GET", "/_mock/health", "evil.example", nil, "")
	assert.Equal(t, 200, resp.StatusCode, "the health check answers any host")
}

func TestAllowedHostsAndPublicURL(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) {
		o.AllowedHosts = []string{"mediamock"}
		o.PublicURL = "http://mock.ci.internal:8080"
	})
	for _, host := range []string{"mediamock:8080", "mock.ci.internal:8080"} {
		resp, body := testkit.Send(t, srv, "GET", "/_mock/clock", host, nil, "")
		assert.Equal(t, 200, resp.StatusCode, "%s: %s", host, body)
	}
	resp, _ := testkit.Send(t, srv, "GET", "/_mock/clock", "other.example", nil, "")
	assert.Equal(t, 403, resp.StatusCode)
}

// A listener beyond loopback without a control token keeps the state
// (every token included) to itself.
func TestExposedListenerNeedsTokenForSnapshots(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0" })
	resp, body := testkit.Send(t, srv, "GET", "/_mock/snapshot", "", nil, "")
	assert.Equal(t, 403, resp.StatusCode)
	assert.Equal(t, "control_token_required", testkit.ErrorCode(t, body))
	resp, _ = testkit.Send(t, srv, "PUT", "/_mock/snapshot", "", map[string]string{"Content-Type": "application/octet-stream"}, "x")
	assert.Equal(t, 403, resp.StatusCode)

	guarded := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0"; o.ControlToken = "s3cret" })
	resp, _ = testkit.Send(t, guarded, "GET", "/_mock/snapshot", "", map[string]string{"Authorization": "Bearer s3cret"}, "")
	assert.Equal(t, 200, resp.StatusCode)
}

// TestExposedListenerHidesTokens: beyond loopback without a control token,
// the workspace and sandbox reads show no token; the control token, a
// loopback listener or a sandbox's own control token see them in full, and
// a sandbox's creator gets its keys.
func TestExposedListenerHidesTokens(t *testing.T) {
	jsonCT := map[string]string{"Content-Type": "application/json"}
	read := func(srv *mediamock.Server, path string, hdr map[string]string) (string, map[string]any) {
		t.Helper()
		resp, body := testkit.Send(t, srv, "GET", path, "", hdr, "")
		require.Equal(t, 200, resp.StatusCode, body)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &m))
		return body, m
	}
	exposed := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0" })
	body, m := read(exposed, "/_mock/workspaces/1", nil)
	assert.NotContains(t, body, mediamock.KeyAllScopes)
	assert.NotRegexp(t, `mk_[a-z0-9_]{3}`, body, "not even part of a token")
	assert.Equal(t, true, m["tokens_hidden"])
	tok := m["tokens"].([]any)[0].(map[string]any)
	assert.Equal(t, "mk_…", tok["token"])
	assert.Equal(t, "mk_…", tok["masked"])

	resp, created := testkit.Send(t, exposed, "POST", "/_mock/sandboxes", "", jsonCT, "{}")
	require.Equal(t, 201, resp.StatusCode, created)
	var sb struct {
		ID           string `json:"id"`
		APIKey       string `json:"api_key"`
		ControlToken string `json:"control_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(created), &sb))
	require.True(t, strings.HasPrefix(sb.ControlToken, "sbc_"), "the creator gets the tokens: %s", created)
	for _, path := range []string{"/_mock/sandboxes/" + sb.ID, "/_mock/sandboxes"} {
		body, _ := read(exposed, path, nil)
		assert.NotContains(t, body, sb.APIKey, path)
		assert.NotContains(t, body, sb.ControlToken, path)
		assert.Contains(t, body, `"tokens_hidden":true`, path)
	}
	own := map[string]string{"Authorization": "Bearer " + sb.ControlToken}
	body, _ = read(exposed, "/_mock/sandboxes/"+sb.ID, own)
	assert.Contains(t, body, sb.APIKey, "a sandbox's control token sees its own tokens")

	guarded := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0"; o.ControlToken = "s3cret" })
	body, m = read(guarded, "/_mock/workspaces/1", map[string]string{"Authorization": "Bearer s3cret"})
	assert.Contains(t, body, mediamock.KeyAllScopes)
	assert.Equal(t, false, m["tokens_hidden"])

	loopback := mediamock.RunT(t)
	body, _ = read(loopback, "/_mock/workspaces/1", nil)
	assert.Contains(t, body, mediamock.KeyAllScopes)
}

// A corrupted snapshot is refused with 400 invalid_snapshot; the server and
// its state go on as they were.
func TestCorruptedSnapshotsLeaveTheStateAlone(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, snap := testkit.Send(t, srv, "GET", "/_mock/snapshot", "", nil, "")
	require.Equal(t, 200, resp.StatusCode)
	_, before := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
	refused := 0
	for i := 0; i < 40; i++ {
		bad := []byte(snap)
		// Flip bytes spread over the pages, a different set each time.
		for j := 0; j < 8; j++ {
			pos := (i*7919 + j*104729) % len(bad)
			bad[pos] ^= byte(0x5a + i + j)
		}
		if i%5 == 0 {
			bad = bad[:len(bad)/(i/5+2)] // and some cut short
		}
		resp, body := testkit.Send(t, srv, "PUT", "/_mock/snapshot", "", map[string]string{"Content-Type": "application/octet-stream"}, string(bad))
		if resp.StatusCode == 200 {
			continue // the flips hit only free space: a sound snapshot
		}
		require.Equal(t, 400, resp.StatusCode, "snapshot %d: %s", i, body)
		assert.Equal(t, "invalid_snapshot", testkit.ErrorCode(t, body))
		refused++
	}
	assert.Greater(t, refused, 20, "most corruptions are caught")
	resp, after := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
	require.Equal(t, 200, resp.StatusCode)
	var a, b map[string]any
	require.NoError(t, json.Unmarshal([]byte(before), &a))
	require.NoError(t, json.Unmarshal([]byte(after), &b))
	assert.Equal(t, a["credits_balance"], b["credits_balance"])
	resp, _ = testkit.Send(t, srv, "POST", "/api/v1/generations", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes, "Content-Type": "application/json"},
		`{"modality":"image","model_id":"imagen-4","prompt":"still alive"}`)
	assert.Equal(t, 201, resp.StatusCode, "the server still writes")
}

// The Authorization scheme is case-insensitive (RFC 9110, section 11.1)
// on every door: the control API (the server's token and a sandbox's), the
// control MCP server, the API and the MCP server take "bearer" and "BEARER"
// as they take "Bearer"; another scheme is still refused.
func TestAuthSchemeIsCaseInsensitiveOnEveryDoor(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "s3cret-token" })
	status, body := testkit.Control(t, srv, "POST", "/sandboxes", "{}", "Authorization", "Bearer s3cret-token")
	require.Equal(t, 201, status, body)
	sandbox := testkit.JSON(t, body)["control_token"].(string)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	mcp := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	doors := []struct {
		name, method, path, token, body string
		hdr                             map[string]string
	}{
		{"control API, the server's token", "GET", "/_mock/clock", "s3cret-token", "", nil},
		{"control API, a sandbox's token", "GET", "/_mock/faults", sandbox, "", nil},
		{"control MCP server", "POST", "/_mock/mcp", "s3cret-token", initialize, mcp},
		{"API", "GET", "/api/v1/account", mediamock.KeyAllScopes, "", nil},
		{"MCP server", "POST", "/mcp", mediamock.KeyAllScopes, initialize, mcp},
	}
	for _, d := range doors {
		for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
			hdr := map[string]string{"Authorization": scheme + " " + d.token}
			for k, v := range d.hdr {
				hdr[k] = v
			}
			resp, body := testkit.Send(t, srv, d.method, d.path, "", hdr, d.body)
			assert.Equal(t, 200, resp.StatusCode, "%s with %q: %s", d.name, scheme, body)
		}
		hdr := map[string]string{"Authorization": "Basic " + d.token}
		for k, v := range d.hdr {
			hdr[k] = v
		}
		resp, body := testkit.Send(t, srv, d.method, d.path, "", hdr, d.body)
		assert.Equal(t, 401, resp.StatusCode, "%s with another scheme: %s", d.name, body)
	}
}
