package mcp_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// connectRetrying opens a session whose transport resumes dropped streams.
func connectRetrying(t *testing.T, srv *mediamock.Server, version string) *sdk.ClientSession {
	t.Helper()
	mc := sdk.NewClient(&sdk.Implementation{Name: "mediamock-test", Version: "1.0.0"}, nil)
	transport := &sdk.StreamableClientTransport{Endpoint: srv.MCPURL(), MaxRetries: 2,
		HTTPClient: &http.Client{Transport: testkit.Bearer{Key: mediamock.KeyAllScopes, Base: srv.Client().Transport}}}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	cs, err := mc.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string) (*sdk.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	return cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
}

func failurePath(srv *mediamock.Server, kind string) mediamock.FailurePath {
	for _, f := range srv.Coverage().FailurePaths {
		if f.Kind == kind {
			return f
		}
	}
	return mediamock.FailurePath{}
}

// An expired session: the official Go SDK client gets a 404 (its
// ErrSessionMissing), initializes again, and goes on.
func TestMCPSessionExpires(t *testing.T) {
	srv := mediamock.RunT(t)
	cs := connectRetrying(t, srv, sessioned)
	_, err := callTool(t, cs, "get_account")
	require.NoError(t, err)

	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "mcp_session_expire", First: 1})
	require.NoError(t, err)
	_, err = callTool(t, cs, "get_account")
	require.Error(t, err)
	assert.ErrorIs(t, err, sdk.ErrSessionMissing)
	_, err = callTool(t, cs, "get_account")
	assert.Error(t, err, "the session stays gone")

	again := connectRetrying(t, srv, sessioned)
	res, err := callTool(t, again, "get_account")
	require.NoError(t, err)
	assert.False(t, res.IsError)
	f := failurePath(srv, "mcp_session_expire")
	assert.Equal(t, 1, f.Met)
	assert.Equal(t, 1, f.Next["retried"]+f.Next["reinitialized"], "the client's next request: %v", f.Next)
}

// A stream dropped mid-call: with sessions, the SDK client resumes it with
// Last-Event-ID and reads the result the server kept; without (the
// sessionless revision), the call fails and the client says so.
func TestMCPStreamDropResumes(t *testing.T) {
	srv := mediamock.RunT(t)
	recorded := testkit.Watch(t, srv)
	cs := connectRetrying(t, srv, sessioned)
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "mcp_stream_drop", Operation: "getAccount", First: 1})
	require.NoError(t, err)
	res, err := callTool(t, cs, "get_account")
	require.NoError(t, err, "resumed with Last-Event-ID")
	assert.False(t, res.IsError)
	// The resumed stream is recorded once it has ended, which may be after
	// the client read the result from it.
	testkit.Await(t, recorded, "the client came back with a GET", func() bool {
		return slices.ContainsFunc(srv.Journal(mediamock.JournalFilter{Front: "mcp"}), func(e mediamock.JournalEntry) bool { return e.Method == "GET" })
	})
	f := failurePath(srv, "mcp_stream_drop")
	assert.Equal(t, 1, f.Met)
	assert.Equal(t, 1, f.Next["resumed_stream"], "%v", f.Next)

	sessionless := connectRetrying(t, srv, latest)
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "mcp_stream_drop", First: 1})
	require.NoError(t, err)
	_, err = callTool(t, sessionless, "get_account")
	assert.Error(t, err, "no resumption in the sessionless revision: the call fails")
	_, err = callTool(t, sessionless, "get_account")
	assert.NoError(t, err, "the next call goes through")
}

// A transient 503 of the MCP endpoint, with Retry-After.
func TestMCPUnavailable(t *testing.T) {
	srv := mediamock.RunT(t)
	cs := connectRetrying(t, srv, sessioned)
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "mcp_unavailable", First: 1})
	require.NoError(t, err)
	_, err = callTool(t, cs, "get_account")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Service Unavailable")
	res, err := callTool(t, cs, "get_account")
	require.NoError(t, err, "the session survives a 503")
	assert.False(t, res.IsError)
	var seen bool
	for _, e := range srv.Journal(mediamock.JournalFilter{Front: "mcp", Status: 503}) {
		seen = seen || e.Fault == "mcp_unavailable"
	}
	assert.True(t, seen)
}
