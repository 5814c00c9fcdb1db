package client_test

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock"
)

// bearer adds an API key to every request of the MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

func TestAgentReadsTheAccount(t *testing.T) {
	srv := mediamock.RunT(t)
	httpClient := &http.Client{Transport: bearer{key: "mk_test_all_scopes", base: srv.Client().Transport}}
	transport := &mcp.StreamableClientTransport{Endpoint: srv.MCPURL(), HTTPClient: httpClient}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_account", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_account: %v %+v", err, res)
	}
	t.Log(res.StructuredContent.(map[string]any)["workspace_name"]) // Acme Studio
}
