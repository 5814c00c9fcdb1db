package mcp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// A Mock-Fault header (or a rule) applies only once the request is
// authorized for what it touches: a request on another workspace's MCP
// session is refused 403 exactly as without the header, and the session
// lives on.
func TestFaultsComeAfterTheSessionOwnerCheck(t *testing.T) {
	srv := mediamock.RunT(t)
	victim := connectRetrying(t, srv, sessioned)
	_, err := callTool(t, victim, "get_account")
	require.NoError(t, err)
	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	send := func(fault string) (int, string) {
		h := auth(mediamock.KeyFreePlan) // another workspace
		h.Set("Mcp-Session-Id", victim.ID())
		h.Set("Mcp-Protocol-Version", sessioned)
		if fault != "" {
			h.Set("Mock-Fault", fault)
		}
		resp, body := rpc(t, srv, h, list)
		return resp.StatusCode, body
	}
	plainStatus, plainBody := send("")
	require.Equal(t, http.StatusForbidden, plainStatus, plainBody)
	for _, kind := range []string{"mcp_session_expire", "mcp_unavailable", "reset", "latency; distribution=fixed; ms=2000"} {
		t.Run(kind, func(t *testing.T) {
			status, body := send(kind)
			assert.Equal(t, plainStatus, status, body)
			assert.Equal(t, plainBody, body)
		})
	}
	res, err := callTool(t, victim, "get_account")
	require.NoError(t, err, "the victim's session lives on")
	assert.False(t, res.IsError)
	assert.Zero(t, failurePath(srv, "mcp_session_expire").Met)

	// The owner's own request still meets its header.
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "mcp_session_expire", First: 1})
	require.NoError(t, err)
	_, err = callTool(t, victim, "get_account")
	assert.Error(t, err, "the owner's session expires")
}
