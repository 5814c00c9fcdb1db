package mcp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// TestJSONRPCErrors: what is not JSON-RPC gets JSON-RPC's errors on /mcp,
// per revision: a parse error (-32700) or an invalid request (-32600)
// with HTTP 400 and a null id, as the transport allows; a method the
// server lacks -32601 with the request's id, HTTP 200 in a session (the
// session goes on) and 404 in the sessionless revision, as it requires.
func TestJSONRPCErrors(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			var h http.Header
			if version < "2026" {
				h = session(t, srv, version)
			} else {
				h = http.Header{"Authorization": {"Bearer " + mediamock.KeyBusiness}, "Content-Type": {"application/json"},
					"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {version}}
			}
			unknown := http.StatusNotFound
			if version < "2026" {
				unknown = http.StatusOK
			}
			cases := []struct {
				name, body string
				status     int
				code       int
				id         string
			}{
				{"not JSON", `not json`, 400, -32700, "null"},
				{"trailing data", `{"jsonrpc":"2.0","id":2,"method":"ping"} x`, 400, -32700, "null"},
				{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, 400, -32600, "null"},
				{"neither request nor response", `{"jsonrpc":"2.0","id":2}`, 400, -32600, "null"},
				{"an empty batch", `[]`, 400, -32600, "null"},
				{"an unknown method", `{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`, unknown, -32601, "9"},
			}
			for _, tc := range cases {
				h := h.Clone()
				if m := methodOf(tc.body); version >= "2026" && m != "" {
					h.Set("Mcp-Method", m) // the sessionless revision's header says the method
				}
				resp, body := post(t, srv, h, tc.body, true)
				assert.Equal(t, tc.status, resp.StatusCode, "%s: %s", tc.name, body)
				var msg struct {
					JSONRPC string
					ID      json.RawMessage
					Error   struct{ Code int }
				}
				require.NoError(t, json.Unmarshal(body, &msg), "%s: %s", tc.name, body)
				assert.Equal(t, "2.0", msg.JSONRPC, tc.name)
				assert.Equal(t, tc.code, msg.Error.Code, "%s: %s", tc.name, body)
				assert.Equal(t, tc.id, string(msg.ID), tc.name)
			}
			if version < "2026" { // a request without its session
				noSession := h.Clone()
				noSession.Del("Mcp-Session-Id")
				resp, body := post(t, srv, noSession, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`, true)
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
				assert.Contains(t, string(body), `"id":11,"error":{"code":-32600`)
			}
			if version < "2026" { // the session goes on
				resp, body := post(t, srv, h, `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, true)
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Contains(t, string(body), `"tools":[`)
				assert.NotContains(t, string(body), "ttlMs", "no cache fields before the sessionless revision")
				assert.NotContains(t, string(body), "cacheScope")
			}
		})
	}
}

// methodOf is the method of a JSON-RPC message, "" when it is not one.
func methodOf(body string) string {
	var m struct{ Method string }
	json.Unmarshal([]byte(body), &m)
	return m.Method
}
