package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/mcp"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestControlMCPChallenges: the control MCP server's 401 carries
// WWW-Authenticate (RFC 9110, section 15.5.2), on an initialize and on a
// sessionless call alike: a bare Bearer challenge of the control realm
// without a token, error="invalid_token" with one it does not know.
func TestControlMCPChallenges(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + controlSessionlessMeta + `}}`
	sessionless := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/list"}}
	for _, tc := range []struct {
		name, serverToken, sent, want string
	}{
		{"no token", "operator", "", `Bearer realm="control"`},
		{"another scheme", "operator", "Basic b3BlcmF0b3I6", `Bearer realm="control"`},
		{"a wrong token", "operator", "Bearer wrong", `Bearer realm="control", error="invalid_token"`},
		{"a lower-case scheme, a wrong token", "operator", "bearer wrong", `Bearer realm="control", error="invalid_token"`},
		{"a token where the server has none", "", "Bearer wrong", `Bearer realm="control", error="invalid_token"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []mediamock.Option
			if tc.serverToken != "" {
				opts = append(opts, mediamock.WithControlToken(tc.serverToken))
			}
			srv := mediamock.RunT(t, opts...)
			for _, req := range []struct {
				h    http.Header
				body string
			}{{http.Header{}, initialize}, {sessionless, list}} {
				h := req.h.Clone()
				if tc.sent != "" {
					h.Set("Authorization", tc.sent)
				}
				resp, body := controlRPC(t, srv, h, req.body)
				assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
				assert.Contains(t, body, "invalid_control_token")
				assert.Equal(t, tc.want, resp.Header.Get("WWW-Authenticate"), req.body)
			}
		})
	}
	t.Run("the server's token", func(t *testing.T) {
		srv := mediamock.RunT(t, mediamock.WithControlToken("operator"))
		resp, body := controlRPC(t, srv, http.Header{"Authorization": {"Bearer operator"}}, initialize)
		assert.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Empty(t, resp.Header.Get("WWW-Authenticate"))
	})
}

// TestControlResourcesArePrivate: what the control MCP server offers to
// read depends on the caller (a sandbox's token reads its own), so the
// sessionless revision reads it with cacheScope "private"; the lists are
// the same for every caller, "public".
func TestControlResourcesArePrivate(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, uri := range []string{"mediamock-control://journal", "mediamock-control://coverage", "mediamock-control://faults"} {
		h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"resources/read"}, "Mcp-Name": {uri}}
		resp, body := controlRPC(t, srv, h, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`",`+controlSessionlessMeta+`}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Contains(t, body, `"cacheScope":"private"`, uri)
		assert.NotContains(t, body, `"cacheScope":"public"`, uri)
	}
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"resources/list"}}
	resp, body := controlRPC(t, srv, h, `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{`+controlSessionlessMeta+`}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"cacheScope":"public"`)
}

// TestControlArrayAnswerIsAnObject: a control tool whose answer is a JSON
// array (list_workspaces) carries it as structured content in an object,
// under "items", and as text as the control API answers it.
func TestControlArrayAnswerIsAnObject(t *testing.T) {
	srv := mediamock.RunT(t)
	status, workspaces := testkit.Control(t, srv, "GET", "/workspaces", "")
	require.Equal(t, http.StatusOK, status, workspaces)
	var want []map[string]any
	require.NoError(t, json.Unmarshal([]byte(workspaces), &want))
	require.NotEmpty(t, want)
	for _, version := range []string{"", "2025-11-25"} {
		ctl := controlClient(t, srv, "", version)
		res := testkit.ControlCall(t, ctl, "list_workspaces", nil, nil)
		structured, ok := res.StructuredContent.(map[string]any)
		require.True(t, ok, "structured content is an object: %#v", res.StructuredContent)
		assert.Len(t, structured, 1)
		items, ok := structured[mcp.ArrayKey].([]any)
		require.True(t, ok, "%#v", structured)
		assert.Len(t, items, len(want))
		var text []map[string]any
		require.NoError(t, json.Unmarshal([]byte(testkit.ResultText(res)), &text))
		assert.Equal(t, want, text, "the text is the control API's array")
		itemsJSON, _ := json.Marshal(items)
		wantJSON, _ := json.Marshal(want)
		assert.JSONEq(t, string(wantJSON), string(itemsJSON))
	}
	// An answer that is an object is its structured content as it is.
	ctl := controlClient(t, srv, "", "")
	res := testkit.ControlCall(t, ctl, "get_clock", nil, nil)
	structured, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok)
	assert.NotContains(t, structured, mcp.ArrayKey)
}

// TestControlToolsListOrderIsThePages: tools/list of the control MCP
// server lists its tools in the order of their names, as the reference
// page says; the page's table lists them in control.json's order.
func TestControlToolsListOrderIsThePages(t *testing.T) {
	srv := mediamock.RunT(t)
	ctl := controlClient(t, srv, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	list, err := ctl.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.True(t, slices.IsSorted(names), "tools/list is in the order of the names: %v", names)

	page, err := os.ReadFile("../../docs/reference/control-mcp-tools.md")
	require.NoError(t, err)
	assert.Contains(t, string(page), "`tools/list` lists them in the order of their names")
	assert.NotContains(t, string(page), "named after its operationId in snake case, in the document's order")
	doc, err := testkit.ControlContract()
	require.NoError(t, err)
	var documentOrder []string
	for _, op := range doc.Operations() {
		if mcp.ControlToolable(doc, op.ID) {
			documentOrder = append(documentOrder, mcp.ToolName(op.ID))
		}
	}
	var pageOrder []string
	for _, line := range strings.Split(string(page), "\n") {
		if name, ok := strings.CutPrefix(line, "| [`"); ok {
			name, _, _ = strings.Cut(name, "`")
			pageOrder = append(pageOrder, name)
		}
	}
	assert.Equal(t, documentOrder, pageOrder, "the page's table is in control.json's order")
	assert.ElementsMatch(t, names, pageOrder, "the page lists the tools tools/list lists")
}
