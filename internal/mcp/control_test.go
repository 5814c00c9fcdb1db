package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/spec"
)

// TestCapTimeout: --mcp-max-wait caps a wait's timeout, and is the timeout
// when the call gives none (the control API's default, 10 s, may be
// longer); a timeout that is not a number is left to the validator.
func TestCapTimeout(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `5`},
		{`{"timeout":55}`, `5`},
		{`{"timeout":2.5}`, `2.5`},
		{`{"timeout":"soon"}`, `"soon"`},
	} {
		var args map[string]json.RawMessage
		assert.NoError(t, json.Unmarshal([]byte(tc.in), &args))
		capSeconds(args, "timeout", 5, true)
		assert.Equal(t, tc.want, string(args["timeout"]), tc.in)
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{"createSandbox": "create_sandbox", "reset": "reset", "getControlDocument": "get_control_document", "listAllAssets": "list_all_assets"} {
		assert.Equal(t, want, ToolName(in))
	}
}

// TestEveryControlOperationIsAToolOrSaysWhyNot: every operation of
// control.json is a tool of the control MCP server, or says in
// x-mcp-no-tool why it cannot be one; a tool says no such thing.
func TestEveryControlOperationIsAToolOrSaysWhyNot(t *testing.T) {
	doc, err := contract.ParseEmbedded("control.json", spec.Control)
	require.NoError(t, err)
	tools := 0
	for _, op := range doc.Operations() {
		reason, says := doc.Extension(op.ID, "x-mcp-no-tool")
		if ControlToolable(doc, op.ID) {
			tools++
			assert.False(t, says, "%s is a tool: it has no x-mcp-no-tool", op.ID)
			continue
		}
		s, _ := reason.(string)
		assert.NotEmpty(t, s, "%s is no tool: x-mcp-no-tool says why", op.ID)
	}
	for _, name := range []string{"save_named_snapshot", "list_named_snapshots", "restore_named_snapshot", "delete_named_snapshot"} {
		assert.Contains(t, controlToolNames(t, doc), name)
	}
	assert.Greater(t, tools, 43)
}

// controlToolNames are the names of the control tools of a document.
func controlToolNames(t *testing.T, doc *contract.Contract) []string {
	var out []string
	for _, op := range doc.Operations() {
		if ControlToolable(doc, op.ID) {
			out = append(out, ToolName(op.ID))
		}
	}
	return out
}
