package mediamock_test

import (
	"context"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// controlClient opens a session of the control MCP server at a protocol
// revision ("" for the SDK's newest, sessionless), with a control token
// ("" for none).
func controlClient(t *testing.T, srv *mediamock.Server, token, version string) *sdk.ClientSession {
	t.Helper()
	var rt http.RoundTripper = srv.Client().Transport
	if token != "" {
		rt = testkit.Bearer{Key: token, Base: rt}
	}
	transport := &sdk.StreamableClientTransport{Endpoint: srv.ControlMCPURL(), MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serviceClient opens a session of the service's MCP server with an API key.
func serviceClient(t *testing.T, srv *mediamock.Server, key, endpoint string) *sdk.ClientSession {
	t.Helper()
	transport := &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: testkit.Bearer{Key: key, Base: srv.Client().Transport}}}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client-under-test", Version: "1"}, nil).Connect(ctx, transport, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestControlMCPRehearsal: an agent steers the simulation from its own MCP
// session, at every revision the service's /mcp speaks, with the server's
// control token and without one.
func TestControlMCPRehearsal(t *testing.T) {
	for _, tc := range []struct{ name, token, version string }{
		{"sessionless", "", ""},
		{"sessions 2025-11-25", "", "2025-11-25"},
		{"sessions 2025-06-18 with a control token", "operator", "2025-06-18"},
		{"sessions 2025-03-26", "", "2025-03-26"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []mediamock.Option
			if tc.token != "" {
				opts = append(opts, mediamock.WithControlToken(tc.token))
			}
			srv := mediamock.RunT(t, opts...)
			ctl := controlClient(t, srv, tc.token, tc.version)
			testkit.Rehearse(t, ctl, func(key, mcpURL string) *sdk.ClientSession { return serviceClient(t, srv, key, mcpURL) })
		})
	}
}
