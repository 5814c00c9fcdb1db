package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
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
