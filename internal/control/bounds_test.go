package control_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/testkit"
)

// members are n unknown members, written into an object.
func members(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x%05d":%d`, i, i)
	}
	return b.String()
}

// Every door's error lists the first violations and counts the others,
// with a sandbox's token as with the server's: the API, a service tool's
// arguments over MCP, the control API (a body, a list of bad items) and
// the control MCP server's tools, with a body and without one. The answer
// stays small however many violations the request holds.
func TestEveryDoorListsTheFirstViolations(t *testing.T) {
	const n = 5000
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "s3cret-token" })
	status, body := testkit.Control(t, srv, "POST", "/sandboxes", "{}", "Authorization", "Bearer s3cret-token")
	require.Equal(t, 201, status, body)
	sandbox := testkit.JSON(t, body)["control_token"].(string)
	mcp := func(path, token, tool, args string) (int, string) {
		call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		resp, body := testkit.Send(t, srv, "POST", path, "", map[string]string{"Authorization": "Bearer " + token,
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}, call)
		var msg struct {
			Result struct {
				IsError           bool            `json:"isError"`
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &msg), body)
		assert.True(t, msg.Result.IsError, "%.300s", body)
		return resp.StatusCode, string(msg.Result.StructuredContent)
	}
	generation := `{"modality":"image","model_id":"imagen-4","prompt":"p",` + members(n) + `}`
	keys := `{"keys":[` + strings.TrimSuffix(strings.Repeat(`{"name":"","scopes":[]},`, n), ",") + `]}`
	doors := []struct {
		name  string
		call  func() (int, string)
		total int
	}{
		{"API", func() (int, string) {
			resp, body := testkit.Send(t, srv, "POST", "/api/v1/generations", "", map[string]string{
				"Authorization": "Bearer " + mediamock.KeyAllScopes, "Content-Type": "application/json"}, generation)
			return resp.StatusCode, body
		}, n},
		{"MCP tool call", func() (int, string) { return mcp("/mcp", mediamock.KeyAllScopes, "create_generation", generation) }, n},
		{"control API, a sandbox's token", func() (int, string) {
			return testkit.Control(t, srv, "POST", "/faults/fail-next", "{"+members(n)+"}", "Authorization", "Bearer "+sandbox)
		}, n + 1}, // count is required too
		{"control API, bad items", func() (int, string) {
			return testkit.Control(t, srv, "POST", "/sandboxes", keys, "Authorization", "Bearer s3cret-token")
		}, 2 * n},
		{"control MCP tool with a body", func() (int, string) { return mcp("/_mock/mcp", sandbox, "fail_next", "{"+members(n)+"}") }, n + 1},
		{"control MCP tool without one", func() (int, string) { return mcp("/_mock/mcp", sandbox, "get_clock", "{"+members(n)+"}") }, n},
	}
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			_, body := d.call()
			assert.Less(t, len(body), 8<<10, "the answer stays small: %.300s", body)
			var answer struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Details struct {
						Violations []problem.Violation `json:"violations"`
						More       int                 `json:"more_violations"`
					} `json:"details"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &answer), body)
			e := answer.Error
			assert.Equal(t, "validation_failed", e.Code)
			assert.Len(t, e.Details.Violations, problem.MaxViolations)
			assert.Equal(t, d.total-problem.MaxViolations, e.Details.More)
			assert.True(t, strings.HasPrefix(e.Message, fmt.Sprintf("%d problems with the request: ", d.total)), e.Message)
			assert.True(t, strings.HasSuffix(e.Message, fmt.Sprintf("; and %d more", d.total-problem.MaxViolations)), e.Message)
		})
	}
}
