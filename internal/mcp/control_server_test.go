package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/mcp"
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

// TestControlMCPTools: every operation of control.json whose answers are
// JSON is a tool, named after its operationId, whose schema takes every
// parameter and body property; the count comes from the document.
func TestControlMCPTools(t *testing.T) {
	srv := mediamock.RunT(t)
	ctl := controlClient(t, srv, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	list, err := ctl.ListTools(ctx, nil)
	require.NoError(t, err)
	tools := map[string]*sdk.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	doc, err := testkit.ControlContract()
	require.NoError(t, err)
	want := 0
	var left []string
	for _, op := range doc.Operations() {
		if !mcp.ControlToolable(doc, op.ID) {
			left = append(left, op.ID)
			continue
		}
		want++
		tl := tools[mcp.ToolName(op.ID)]
		if !assert.NotNil(t, tl, "%s is a tool", op.ID) {
			continue
		}
		args, err := doc.Arguments(op.ID)
		require.NoError(t, err)
		schema := tl.InputSchema.(map[string]any)
		assert.Equal(t, "object", schema["type"], op.ID)
		props := schema["properties"].(map[string]any)
		for name := range args.Schema["properties"].(map[string]any) {
			assert.Contains(t, props, name, "%s takes %s", op.ID, name)
		}
		assert.NotEmpty(t, tl.Description, op.ID)
		a := tl.Annotations
		require.NotNil(t, a, op.ID)
		switch op.Method {
		case http.MethodGet:
			assert.True(t, a.ReadOnlyHint && a.IdempotentHint, "%s reads", op.ID)
		case http.MethodDelete:
			assert.True(t, a.IdempotentHint && *a.DestructiveHint, "%s removes", op.ID)
		case http.MethodPut:
			assert.True(t, a.IdempotentHint, "%s sets", op.ID)
		}
	}
	assert.Len(t, list.Tools, want, "one tool per operation of control.json with JSON answers")
	// What is left out streams, moves a binary state or is a scraper's
	// text, which no tool result carries: the event stream, the snapshot
	// and its restore, the Prometheus metrics.
	assert.ElementsMatch(t, []string{"streamEvents", "getSnapshot", "restoreSnapshot", "getMetrics"}, left)
	assert.True(t, *tools["reset"].Annotations.DestructiveHint)
	assert.True(t, *tools["reset_sandbox"].Annotations.DestructiveHint)
	assert.False(t, *tools["create_sandbox"].Annotations.DestructiveHint)
	t.Logf("%d tools of %d operations", len(list.Tools), len(doc.Operations()))
}

// toolError calls a tool that must fail and returns the control API's
// error code it carries.
func toolError(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	require.True(t, res.IsError, "%s must fail: %s", name, testkit.ResultText(res))
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(testkit.ResultText(res)), &body), testkit.ResultText(res))
	return body.Error.Code
}

// TestControlMCPIsolation: a sandbox's control token on the control MCP
// server reaches that sandbox alone, with the control API's own refusals;
// the server's token is needed to reach it at all when the server has one.
func TestControlMCPIsolation(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithControlToken("operator"))
	var mine, theirs struct {
		ID           string `json:"id"`
		WorkspaceID  int64  `json:"workspace_id"`
		ControlToken string `json:"control_token"`
	}
	for _, sb := range []any{&mine, &theirs} {
		status, body := testkit.Control(t, srv, "POST", "/sandboxes", `{}`, "Authorization", "Bearer operator")
		require.Equal(t, http.StatusCreated, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), sb))
	}
	ctl := controlClient(t, srv, mine.ControlToken, "")
	refusals := []struct {
		tool       string
		args       map[string]any
		method     string
		path, body string
	}{
		{"get_sandbox", map[string]any{"sandbox": theirs.ID}, "GET", "/sandboxes/" + theirs.ID, ""},
		{"delete_sandbox", map[string]any{"sandbox": theirs.ID}, "DELETE", "/sandboxes/" + theirs.ID, ""},
		{"fail_next", map[string]any{"count": 1, "sandbox": theirs.ID}, "POST", "/faults/fail-next?sandbox=" + theirs.ID, `{"count":1}`},
		{"get_journal", map[string]any{"sandbox": theirs.ID}, "GET", "/journal?sandbox=" + theirs.ID, ""},
		{"get_ledger", map[string]any{"id": theirs.WorkspaceID}, "GET", fmt.Sprintf("/workspaces/%d/ledger", theirs.WorkspaceID), ""},
		{"grant_credits", map[string]any{"id": theirs.WorkspaceID, "amount": 100}, "POST", fmt.Sprintf("/workspaces/%d/credits", theirs.WorkspaceID), `{"amount":100}`},
		{"list_workspaces", nil, "GET", "/workspaces", ""},
		{"add_workspace", map[string]any{"name": "x"}, "POST", "/workspaces", `{"name":"x"}`},
		{"advance_clock", map[string]any{"seconds": 60}, "POST", "/clock/advance", `{"seconds":60}`},
		{"set_clock_mode", map[string]any{"mode": "manual"}, "PUT", "/clock/mode", `{"mode":"manual"}`},
		{"reset", nil, "POST", "/reset", ""},
		{"list_sandboxes", nil, "GET", "/sandboxes", ""},
	}
	for _, r := range refusals {
		t.Run(r.tool, func(t *testing.T) {
			status, body := testkit.Control(t, srv, r.method, r.path, r.body, "Authorization", "Bearer "+mine.ControlToken)
			require.GreaterOrEqual(t, status, 400, "the control API refuses it: %s", body)
			var want struct {
				Error struct{ Code string } `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &want))
			assert.Equal(t, want.Error.Code, toolError(t, ctl, r.tool, r.args), "the same refusal as the control API")
		})
	}
	// What is its own it reaches.
	testkit.ControlCall(t, ctl, "get_sandbox", map[string]any{"sandbox": mine.ID}, nil)
	testkit.ControlCall(t, ctl, "fail_next", map[string]any{"count": 1}, nil)
	testkit.ControlCall(t, ctl, "get_ledger", map[string]any{"id": mine.WorkspaceID}, nil)
	_, theirFaults := testkit.Control(t, srv, "GET", "/faults?sandbox="+theirs.ID, "", "Authorization", "Bearer operator")
	assert.Contains(t, theirFaults, `"fail_next":[]`, "the other sandbox's faults are untouched")

	// Without the server's token or a live sandbox's, nothing is reached.
	for _, token := range []string{"", "wrong", "sbc_1_0000000000000000", mediamock.KeyAllScopes} {
		h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		resp, body := controlRPC(t, srv, h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+controlSessionlessMeta+`}}`)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "token %q: %s", token, body)
		assert.Contains(t, body, "invalid_control_token")
	}
}

const controlSessionlessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// controlRPC posts a JSON-RPC body to the control MCP server.
func controlRPC(t *testing.T, srv *mediamock.Server, h http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.ControlMCPURL(), strings.NewReader(body))
	require.NoError(t, err)
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host := h.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(data)
}

// TestControlMCPGuards: a foreign Host or Origin is refused, as on the
// control API; an unknown tool, bad arguments, a batch and a burst of bad
// calls get JSON-RPC or tool errors, never a 5xx.
func TestControlMCPGuards(t *testing.T) {
	srv := mediamock.RunT(t)
	call := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + controlSessionlessMeta + `}}`
	}
	headers := func(name string) http.Header {
		return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {name}}
	}
	t.Run("foreign host", func(t *testing.T) {
		h := headers("get_clock")
		h.Set("Host", "attacker.example")
		resp, body := controlRPC(t, srv, h, call("get_clock", `{}`))
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
		assert.Contains(t, body, "forbidden_host")
	})
	t.Run("foreign origin", func(t *testing.T) {
		h := headers("get_clock")
		h.Set("Origin", "https://attacker.example")
		resp, body := controlRPC(t, srv, h, call("get_clock", `{}`))
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
		assert.Contains(t, body, "forbidden_origin")
	})
	bad := []struct{ name, tool, args, want string }{
		{"unknown tool", "no_such_tool", `{}`, `"error"`},
		{"arguments not an object", "get_journal", `[1,2]`, `"isError":true`},
		{"argument of the wrong type", "fail_next", `{"count":"many"}`, `"isError":true`},
		{"unknown argument", "get_clock", `{"nope":1}`, `"isError":true`},
		{"missing path parameter", "get_sandbox", `{}`, `"isError":true`},
		{"unknown sandbox", "get_sandbox", `{"sandbox":"sbx_9_nothing"}`, `"isError":true`},
		{"out of range", "advance_clock", `{"seconds":-5}`, `"isError":true`},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			resp, body := controlRPC(t, srv, headers(b.tool), call(b.tool, b.args))
			assert.Less(t, resp.StatusCode, 500, body)
			assert.Contains(t, body, b.want)
		})
	}
	t.Run("batch of 50 bad calls", func(t *testing.T) {
		var calls []string
		for i := range 50 {
			name := []string{"fail_next", "no_such_tool", "get_sandbox", "advance_clock"}[i%4]
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"count":-%d}}}`, i+1, name, i))
		}
		batch := "[" + strings.Join(calls, ",") + "]"
		// Without a session, the batch is refused whole.
		resp, body := controlRPC(t, srv, http.Header{}, batch)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		assert.Contains(t, body, `"error"`)
		// In a session of the revision that has batches (2025-03-26),
		// each call gets its JSON-RPC or tool error.
		resp, body = controlRPC(t, srv, http.Header{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		session := http.Header{"Mcp-Session-Id": {resp.Header.Get("Mcp-Session-Id")}, "Mcp-Protocol-Version": {"2025-03-26"}}
		require.NotEmpty(t, session.Get("Mcp-Session-Id"))
		resp, body = controlRPC(t, srv, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.Less(t, resp.StatusCode, 300, body)
		resp, body = controlRPC(t, srv, session, batch)
		assert.Equal(t, http.StatusOK, resp.StatusCode, body)
		for i := range 50 {
			assert.Contains(t, body, fmt.Sprintf(`"id":%d,`, i+1), "call %d is answered", i+1)
		}
		assert.Equal(t, 50, strings.Count(body, `"isError":true`)+strings.Count(body, `"error":{"code":-3`), body)
	})
	t.Run("burst of 50 bad calls", func(t *testing.T) {
		var wg sync.WaitGroup
		statuses := make([]int, 50)
		bodies := make([]string, 50)
		for i := range 50 {
			wg.Go(func() {
				b := bad[i%len(bad)]
				resp, body := controlRPC(t, srv, headers(b.tool), call(b.tool, b.args))
				statuses[i], bodies[i] = resp.StatusCode, body
			})
		}
		wg.Wait()
		for i := range 50 {
			assert.Less(t, statuses[i], 500, bodies[i])
			assert.Contains(t, bodies[i], bad[i%len(bad)].want)
		}
	})
}

// TestControlMCPResourcesAndPrompts: the journal and the coverage of the
// caller's scope are resources; the prompts name the tool calls of a
// rehearsal.
func TestControlMCPResourcesAndPrompts(t *testing.T) {
	srv := mediamock.RunT(t)
	var sb struct {
		ID           string `json:"id"`
		APIKey       string `json:"api_key"`
		ControlToken string `json:"control_token"`
	}
	status, body := testkit.Control(t, srv, "POST", "/sandboxes", `{}`)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &sb))
	testkit.REST(t, srv, sb.APIKey, "GET", "/account", nil)
	testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)

	for _, version := range []string{"", "2025-11-25"} {
		ctl := controlClient(t, srv, sb.ControlToken, version)
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
		defer cancel()
		list, err := ctl.ListResources(ctx, nil)
		require.NoError(t, err)
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		assert.Subset(t, uris, []string{"mediamock-control://journal", "mediamock-control://coverage"})
		read, err := ctl.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mediamock-control://journal"})
		require.NoError(t, err)
		var journal struct {
			Entries []struct {
				WorkspaceID int64 `json:"workspace_id"`
			} `json:"entries"`
		}
		require.NoError(t, json.Unmarshal([]byte(read.Contents[0].Text), &journal))
		require.Len(t, journal.Entries, 1, "the sandbox's own request alone: %s", read.Contents[0].Text)
		_, err = ctl.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mediamock-control://coverage"})
		require.NoError(t, err)

		prompts, err := ctl.ListPrompts(ctx, nil)
		require.NoError(t, err)
		require.Len(t, prompts.Prompts, 3)
		got, err := ctl.GetPrompt(ctx, &sdk.GetPromptParams{Name: "fail_next_video_and_check_refund", Arguments: map[string]string{"sandbox": sb.ID}})
		require.NoError(t, err)
		text := got.Messages[0].Content.(*sdk.TextContent).Text
		for _, tool := range []string{"fail_next", "run_sandbox", "get_ledger", "get_journal", "delete_sandbox", sb.ID} {
			assert.Contains(t, text, tool)
		}
	}
}

// TestControlMCPDoesNotCount: the control MCP server's calls count against
// no workspace's rate limit, and stay out of the journal.
func TestControlMCPDoesNotCount(t *testing.T) {
	srv := mediamock.RunT(t)
	var sb struct {
		ID          string `json:"id"`
		APIKey      string `json:"api_key"`
		WorkspaceID int64  `json:"workspace_id"`
	}
	status, body := testkit.Control(t, srv, "POST", "/sandboxes", `{"rate_limit_per_minute":2}`)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &sb))
	ctl := controlClient(t, srv, "", "")
	for range 5 {
		testkit.ControlCall(t, ctl, "get_ledger", map[string]any{"id": sb.WorkspaceID}, nil)
		testkit.ControlCall(t, ctl, "get_workspace", map[string]any{"id": sb.WorkspaceID}, nil)
	}
	status, _, hdr := testkit.REST(t, srv, sb.APIKey, "GET", "/account", nil)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "1", hdr.Get("X-RateLimit-Remaining"), "the first request of the window")
	var journal struct {
		Entries []any `json:"entries"`
	}
	testkit.ControlCall(t, ctl, "get_journal", nil, &journal)
	assert.Len(t, journal.Entries, 1, "the REST request alone")
}
