package testkit

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// ControlCall calls a tool of the control MCP server and decodes its
// structured content into out (when not nil); it returns the result. A
// protocol error fails the test; a tool error does when wantError is
// false.
func ControlCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s", name)
	require.False(t, res.IsError, "%s: %s", name, ResultText(res))
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, out), "%s: %s", name, data)
	}
	return res
}

// ResultText is the text of a tool result.
func ResultText(res *sdk.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// Rehearse runs the scripted session of an agent that steers the mock
// from its control MCP session ctl: it creates a sandbox, fails its next
// video, generates one on the service's MCP server with the sandbox's key
// (service connects to it), runs the sandbox's due events, sees the job
// fail and its credits come back in the ledger, finds the request in the
// journal, and deletes the sandbox.
func Rehearse(t *testing.T, ctl *sdk.ClientSession, service func(apiKey, mcpURL string) *sdk.ClientSession) {
	t.Helper()
	var sb struct {
		ID          string `json:"id"`
		APIKey      string `json:"api_key"`
		WorkspaceID int64  `json:"workspace_id"`
		MCPURL      string `json:"mcp_url"`
		Credits     int64  `json:"credits_balance"`
	}
	ControlCall(t, ctl, "create_sandbox", map[string]any{"name": "rehearsal"}, &sb)
	require.NotEmpty(t, sb.ID)
	ControlCall(t, ctl, "fail_next", map[string]any{"count": 1, "modality": "video", "sandbox": sb.ID}, nil)

	svc := service(sb.APIKey, sb.MCPURL)
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	gen, err := svc.CallTool(ctx, &sdk.CallToolParams{Name: "create_generation", Arguments: map[string]any{
		"modality": "video", "model_id": "veo-3-fast", "prompt": "surf at dawn", "duration": 4}})
	require.NoError(t, err)
	require.False(t, gen.IsError, "%s", ResultText(gen))
	var job struct {
		Assets []struct {
			ID int64 `json:"id"`
		} `json:"assets"`
	}
	data, _ := json.Marshal(gen.StructuredContent)
	require.NoError(t, json.Unmarshal(data, &job))
	require.NotEmpty(t, job.Assets, "%s", data)

	var run struct {
		Applied int `json:"applied"`
	}
	ControlCall(t, ctl, "run_sandbox", map[string]any{"sandbox": sb.ID}, &run)

	got, err := svc.CallTool(ctx, &sdk.CallToolParams{Name: "get_generation", Arguments: map[string]any{"id": job.Assets[0].ID}})
	require.NoError(t, err)
	require.False(t, got.IsError, "%s", ResultText(got))
	var status struct {
		Status string `json:"status"`
	}
	data, _ = json.Marshal(got.StructuredContent)
	require.NoError(t, json.Unmarshal(data, &status))
	require.Equal(t, "failed", status.Status, "the rule fails the video: %s", data)

	var ledger struct {
		Balance int64 `json:"balance"`
		Entries []struct {
			Kind   string `json:"kind"`
			Amount int64  `json:"amount"`
		} `json:"entries"`
	}
	res := ControlCall(t, ctl, "get_ledger", map[string]any{"id": sb.WorkspaceID}, nil)
	data, _ = json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(data, &ledger), "%s", data)
	require.Contains(t, string(data), "refund", "the failed video's credits come back: %s", data)

	var journal struct {
		Entries []struct {
			Operation string `json:"operation"`
			Status    int    `json:"status"`
		} `json:"entries"`
	}
	ControlCall(t, ctl, "get_journal", map[string]any{"sandbox": sb.ID, "operation": "createGeneration"}, &journal)
	require.Len(t, journal.Entries, 1)
	require.Equal(t, http.StatusCreated, journal.Entries[0].Status)
	var seen struct {
		Operation string `json:"operation"`
	}
	ControlCall(t, ctl, "wait_journal", map[string]any{"sandbox": sb.ID, "operation": "getGeneration", "after": 0, "timeout": 1}, &seen)
	require.Equal(t, "getGeneration", seen.Operation)

	ControlCall(t, ctl, "delete_sandbox", map[string]any{"sandbox": sb.ID}, nil)
	gone, err := ctl.CallTool(ctx, &sdk.CallToolParams{Name: "get_sandbox", Arguments: map[string]any{"sandbox": sb.ID}})
	require.NoError(t, err)
	require.True(t, gone.IsError, "a deleted sandbox is not found: %s", ResultText(gone))
}
