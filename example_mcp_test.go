package mediamock_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock"
)

// bearer adds an API key to every request of an MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// The MCP client of docs/tutorials/connect-an-agent.md (examples/go/mcp_test.go) (a test uses
// mediamock.RunT(t) instead of New).
func Example_mcpClient() {
	ctx := context.Background()
	srv, err := mediamock.New(mediamock.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	httpClient := &http.Client{Transport: bearer{key: "mk_test_all_scopes", base: srv.Client().Transport}}
	transport := &mcp.StreamableClientTransport{Endpoint: srv.MCPURL(), HTTPClient: httpClient}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_account", Arguments: map[string]any{}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.IsError, res.StructuredContent.(map[string]any)["workspace_name"])
	// Output: false Acme Studio
}

// An agent's session with the control MCP server: the control API as
// tools (docs/how-to/steer-from-an-agent.md). Without a control token on
// the server, the session needs no credential.
func Example_controlMCP() {
	ctx := context.Background()
	srv, err := mediamock.New(mediamock.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	transport := &mcp.StreamableClientTransport{Endpoint: srv.ControlMCPURL(), HTTPClient: srv.Client()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_sandbox", Arguments: map[string]any{"name": "agent"}})
	if err != nil {
		panic(err)
	}
	sb := res.StructuredContent.(map[string]any)
	fmt.Println(res.IsError, sb["object"], sb["name"], sb["from"])
	// Output: false sandbox agent Acme Studio
}
