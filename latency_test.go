package mediamock

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInjectedLatencyIsApplied(t *testing.T) {
	srv := RunT(t)
	var slept []time.Duration
	srv.env.Sleep = func(_ context.Context, d time.Duration) { slept = append(slept, d) }
	srv.SetLatency("getAccount", 300*time.Millisecond)
	srv.SetLatency("*", 20*time.Millisecond)
	for _, path := range []string{"/account", "/models", "/account"} {
		req, _ := http.NewRequest("GET", srv.BaseURL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+KeyAllScopes)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.Equal(t, []time.Duration{300 * time.Millisecond, 20 * time.Millisecond, 300 * time.Millisecond}, slept)
	j := srv.Journal(JournalFilter{Operation: "getAccount"})
	require.Len(t, j, 2)
	assert.EqualValues(t, 300, j[0].InjectedLatencyMS)

	// An operation's own latency comes before every operation's, whichever
	// was set first, as before the shorthand made rules.
	slept = nil
	require.NoError(t, srv.ClearFaults())
	require.NoError(t, srv.SetLatency("*", 20*time.Millisecond))
	require.NoError(t, srv.SetLatency("getAccount", 300*time.Millisecond))
	for _, path := range []string{"/account", "/models"} {
		req, _ := http.NewRequest("GET", srv.BaseURL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+KeyAllScopes)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, []time.Duration{300 * time.Millisecond, 20 * time.Millisecond}, slept)
}

// An operation's latency strikes its MCP tool calls too, in both
// revisions: the edge knows the call's operation once it is admitted,
// before any head goes, and the journal names the latency.
func TestInjectedLatencyStrikesMCPToolCalls(t *testing.T) {
	srv := RunT(t)
	var slept []time.Duration
	srv.env.Sleep = func(_ context.Context, d time.Duration) { slept = append(slept, d) }
	require.NoError(t, srv.SetLatency("listModels", 40*time.Millisecond))
	post := func(h map[string]string, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+KeyAllScopes)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Less(t, resp.StatusCode, 300)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	post(map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_models"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_models","arguments":{},`+meta+`}}`)
	post(map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_account"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_account","arguments":{},`+meta+`}}`)
	assert.Equal(t, []time.Duration{40 * time.Millisecond}, slept, "list_models alone")
	j := srv.Journal(JournalFilter{Operation: "listModels"})
	require.Len(t, j, 1)
	assert.EqualValues(t, 40, j[0].InjectedLatencyMS)
	assert.Equal(t, "latency", j[0].Fault)
}
