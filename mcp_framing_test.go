package mediamock

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneAuthenticationAndOneDecodePerToolCall: a tool call over HTTP is
// authenticated once (as its request arrives) and its body decoded once,
// in either revision, answered as one JSON body or as events; it counts
// once against the rate window. The counters are the gate's (every token
// it resolves) and the MCP front's (every body it decodes).
func TestOneAuthenticationAndOneDecodePerToolCall(t *testing.T) {
	srv := RunT(t)
	const sessionless = "2026-07-28"
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

	post := func(t *testing.T, header http.Header, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader(body))
		require.NoError(t, err)
		req.Header = header.Clone()
		req.Header.Set("Authorization", "Bearer "+KeyAllScopes)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(data)
	}
	// A session of the handshake era.
	resp, body := post(t, http.Header{}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"count","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	session := http.Header{"Mcp-Session-Id": {resp.Header.Get("Mcp-Session-Id")}, "Mcp-Protocol-Version": {"2025-11-25"}}
	resp, body = post(t, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	f, err := srv.fronts.MCP()
	require.NoError(t, err)
	ws, ok := srv.WorkspaceID(KeyAllScopes)
	require.True(t, ok)

	stateless := http.Header{"Mcp-Protocol-Version": {sessionless}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"get_account"}}
	cases := []struct {
		name   string
		header http.Header
		body   string
		events bool
	}{
		{"sessionless", stateless, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_account","arguments":{},` + meta + `}}}`, false},
		{"sessionless with progress", stateless, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_account","arguments":{},` + meta + `,"progressToken":"p"}}}`, true},
		{"session", session, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`, false},
		{"session with progress", session, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_account","arguments":{},"_meta":{"progressToken":5}}}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			auths, decodes := srv.env.Gate.Authentications(), f.Decodes()
			window := srv.eng.RateWindow(ws).Remaining
			resp, body := post(t, tc.header, tc.body)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			assert.Contains(t, body, `"structuredContent":{"object":"account"`)
			if tc.events {
				assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
				assert.Contains(t, body, "event: message\ndata: ")
			} else {
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			}
			assert.Equal(t, uint64(1), srv.env.Gate.Authentications()-auths, "authentications of one tool call")
			assert.Equal(t, uint64(1), f.Decodes()-decodes, "decodings of one tool call's body")
			assert.Equal(t, window-1, srv.eng.RateWindow(ws).Remaining, "the call counts once")
		})
	}

	// A session call that may meet a stream drop answers on an event
	// stream whose events are kept for resumption: still one
	// authentication.
	_, err = srv.AddFault(FaultSpec{Kind: "mcp_stream_drop", Operation: "listModels", First: 1})
	require.NoError(t, err)
	auths := srv.env.Gate.Authentications()
	resp, body = post(t, session, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"structuredContent":{"object":"account"`)
	assert.Equal(t, uint64(1), srv.env.Gate.Authentications()-auths, "authentications of a call on a resumable stream")
}
