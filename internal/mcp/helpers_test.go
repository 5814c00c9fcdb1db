package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The protocol revisions the tests speak: the SDK's newest (sessionless,
// 2026-07-28) and the newest of the handshake era (sessions), which most
// clients use today.
const (
	latest    = ""
	sessioned = "2025-11-25"
)

// client is an MCP client session with what the server sent it.
type client struct {
	*sdk.ClientSession
	t          *testing.T
	mu         sync.Mutex
	progress   []*sdk.ProgressNotificationParams
	progressed testkit.Signal // notified at each progress notification
}

// connect opens an MCP session over Streamable HTTP with an API key, at a
// protocol revision ("" for the SDK's newest).
func connect(t *testing.T, srv *mediamock.Server, key, version string) *client {
	t.Helper()
	c := &client{t: t}
	mc := sdk.NewClient(&sdk.Implementation{Name: "mediamock-test", Version: "1.0.0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			c.mu.Unlock()
			c.progressed.Notify()
		},
	})
	transport := &sdk.StreamableClientTransport{Endpoint: srv.MCPURL(), MaxRetries: -1,
		HTTPClient: &http.Client{Transport: testkit.Bearer{Key: key, Base: srv.Client().Transport}}}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	cs, err := mc.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	c.ClientSession = cs
	return c
}

// call calls a tool and returns its result; a protocol error fails the test.
func (c *client) call(name string, args map[string]any) *toolResult {
	c.t.Helper()
	return c.callMeta(name, args, nil)
}

func (c *client) callMeta(name string, args map[string]any, meta sdk.Meta) *toolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
	require.NoError(c.t, err, "tools/call %s", name)
	return newResult(c.t, name, res)
}

func (c *client) progressSeen() []*sdk.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*sdk.ProgressNotificationParams{}, c.progress...)
}

// awaitProgress waits until the progress notifications received so far
// satisfy cond: the client's handler wakes it at each one (bounded by
// testkit.Bound).
func (c *client) awaitProgress(what string, cond func(seen []*sdk.ProgressNotificationParams) bool) {
	c.t.Helper()
	testkit.Await(c.t, &c.progressed, what, func() bool { return cond(c.progressSeen()) })
}

// toolResult is a tool's result with its structured content decoded.
type toolResult struct {
	t    *testing.T
	name string
	*sdk.CallToolResult
	JSON map[string]any
	Raw  []byte
}

func newResult(t *testing.T, name string, res *sdk.CallToolResult) *toolResult {
	t.Helper()
	r := &toolResult{t: t, name: name, CallToolResult: res}
	var err error
	r.Raw, err = json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(r.Raw, &r.JSON), "%s: structured content %s", name, r.Raw)
	return r
}

// Code is the error.code of a tool error, "" for a success.
func (r *toolResult) Code() string {
	if !r.IsError {
		return ""
	}
	e, _ := r.JSON["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// ok fails the test unless the call succeeded.
func (r *toolResult) ok() *toolResult {
	r.t.Helper()
	require.False(r.t, r.IsError, "%s: %s", r.name, r.Raw)
	return r
}

// text is the result's first text content.
func (r *toolResult) text() string {
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// id reads an integer field of the structured content: "id" or "assets.0.id".
func (r *toolResult) id(path string) int64 {
	r.t.Helper()
	var v any = r.JSON
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i := 0
			for _, ch := range p {
				i = i*10 + int(ch-'0')
			}
			require.Less(r.t, i, len(x), "%s: %s", path, r.Raw)
			v = x[i]
		}
	}
	f, ok := v.(float64)
	require.True(r.t, ok, "%s: no number at %s in %s", r.name, path, r.Raw)
	return int64(f)
}

// rpc posts one raw JSON-RPC message to /mcp with the headers a client
// sends, and returns the response with its body read.
func rpc(t *testing.T, srv *mediamock.Server, header http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(data)
}

func auth(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
