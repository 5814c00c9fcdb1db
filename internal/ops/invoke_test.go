package ops_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/testkit"
)

// callREST sends GET /account and returns the status and the error code.
func callREST(t *testing.T, srv *mediamock.Server) (int, string) {
	t.Helper()
	status, body, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return status, code
}

// callMCP calls get_account over stdio and returns the tool's structured
// content.
func callMCP(t *testing.T, srv *mediamock.Server) map[string]any {
	t.Helper()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`,
	}, "\n") + "\n"
	inR, inW := io.Pipe() // open until the answer is read: the end of input ends the session
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeMCP(context.Background(), inR, pw, mediamock.KeyAllScopes); pw.Close() }()
	go io.WriteString(inW, in)
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg))
		if msg.ID == 2 {
			inW.Close()
			go io.Copy(io.Discard, pr)
			require.NoError(t, <-done)
			assert.True(t, msg.Result.IsError)
			return msg.Result.StructuredContent
		}
	}
	t.Fatalf("no answer to the tool call: %v", sc.Err())
	return nil
}

// TestEveryFrontGoesThroughOnePipeline: a handler whose answer breaks
// openapi.json is caught by the strict check, counted in the coverage and
// recorded in the journal the same way whether REST or MCP carried the
// call; a handler that panics is an internal error on both.
func TestEveryFrontGoesThroughOnePipeline(t *testing.T) {
	srv := mediamock.RunT(t) // strict
	restore := ops.SwapHandler("getAccount", func(*ops.Call) (int, any, error) {
		return http.StatusOK, map[string]any{"object": "account"}, nil // required fields missing
	})
	status, code := callREST(t, srv)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Equal(t, "response_validation_failed", code)
	res := callMCP(t, srv)
	assert.Equal(t, "response_validation_failed", res["error"].(map[string]any)["code"])
	assert.Equal(t, float64(200), res["error"].(map[string]any)["details"].(map[string]any)["status"], "the status the handler answered")
	restore()

	cov := srv.Coverage()
	for _, op := range cov.Operations {
		if op.Operation == "getAccount" {
			assert.Contains(t, op.Statuses, mediamock.StatusCoverage{Status: 500, Count: 2, Declared: true}, "one 500 from each front")
			assert.Equal(t, map[string]int{"rest": 1, "mcp": 1}, op.Fronts)
		}
	}
	entries := srv.Journal(mediamock.JournalFilter{Operation: "getAccount"})
	require.Len(t, entries, 2)
	for _, e := range entries {
		assert.Equal(t, 500, e.Status, e.Front)
		assert.Equal(t, "response_validation_failed", e.ErrorCode, e.Front)
		assert.NotZero(t, e.WorkspaceID, e.Front)
	}

	defer ops.SwapHandler("getAccount", func(*ops.Call) (int, any, error) { panic("kaboom") })()
	status, code = callREST(t, srv)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Equal(t, "internal_error", code)
	res = callMCP(t, srv)
	assert.Equal(t, "internal_error", res["error"].(map[string]any)["code"])
}
