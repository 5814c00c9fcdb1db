package ops_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

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
	// The client has the answer before the server has journaled and counted
	// it (the record comes after the last byte is written): wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := srv.AwaitRequest(ctx, mediamock.JournalFilter{Front: "rest", Operation: "getAccount"})
	require.NoError(t, err)
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

// TestAdmissionOrder holds the forced responses (the responses shorthand:
// status rules spent after their count) to their place after the gate: a
// forced response is taken only from a request whose credential, rate
// window and scope let it through, the workspace's own before the global
// ones, and only by the operation it names. (The gate's own order is
// TestCountAndIdentify in package gate.)
func TestAdmissionOrder(t *testing.T) {
	type force struct {
		key    string // whose workspace ("": every workspace)
		op     string
		status int
	}
	tests := []struct {
		name   string
		fill   string // a key whose window is used up first
		forces []force
		key    string
		path   string // GET /account unless set
		method string
		body   string
		status int    // 200 or 201 when let in
		code   string // the error code of the refusal
		forced int    // forced responses left after the request, in every scope
	}{
		{name: "an unknown token, the operation forced", forces: []force{{"", "*", 503}}, key: "mk_test_nope",
			status: http.StatusUnauthorized, code: "invalid_credentials", forced: 1},
		{name: "the window before a forced response", fill: mediamock.KeyFreePlan, forces: []force{{"", "*", 503}}, key: mediamock.KeyFreePlan,
			status: http.StatusTooManyRequests, code: "rate_limited", forced: 1},
		{name: "the scope before a forced response", forces: []force{{"", "createGeneration", 503}}, key: mediamock.KeyReadOnly,
			method: "POST", path: "/generations", body: `{"modality":"image","model_id":"imagen-4","prompt":"a cat"}`,
			status: http.StatusForbidden, code: "insufficient_scope", forced: 1},
		{name: "forced 503", forces: []force{{"", "createGeneration", 503}}, key: mediamock.KeyAllScopes,
			method: "POST", path: "/generations", body: `{"modality":"image","model_id":"imagen-4","prompt":"a cat"}`,
			status: http.StatusServiceUnavailable, code: "service_unavailable"},
		{name: "forced 500 for every operation", forces: []force{{"", "*", 500}}, key: mediamock.KeyAllScopes,
			status: http.StatusInternalServerError, code: "internal_error"},
		{name: "forced 429", forces: []force{{"", "getAccount", 429}}, key: mediamock.KeyAllScopes,
			status: http.StatusTooManyRequests, code: "rate_limited"},
		{name: "forced for another operation", forces: []force{{"", "listModels", 503}}, key: mediamock.KeyAllScopes,
			status: http.StatusOK, forced: 1},
		{name: "forced for the workspace", forces: []force{{mediamock.KeyAllScopes, "getAccount", 503}}, key: mediamock.KeyReadOnly,
			status: http.StatusServiceUnavailable, code: "service_unavailable"},
		{name: "forced for another workspace", forces: []force{{mediamock.KeyFreePlan, "*", 503}}, key: mediamock.KeyAllScopes,
			status: http.StatusOK, forced: 1},
		{name: "the workspace's own before the global one", forces: []force{{"", "getAccount", 500}, {mediamock.KeyAllScopes, "getAccount", 503}}, key: mediamock.KeyAllScopes,
			status: http.StatusServiceUnavailable, code: "service_unavailable", forced: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mediamock.RunT(t)
			if tt.fill != "" {
				for {
					_, _, h := testkit.REST(t, srv, tt.fill, "GET", "/models", nil)
					if h.Get("X-RateLimit-Remaining") == "0" {
						break
					}
				}
			}
			for _, f := range tt.forces {
				path := "/faults/responses"
				if f.key != "" {
					ws, ok := srv.WorkspaceID(f.key)
					require.True(t, ok)
					path += "?workspace_id=" + strconv.FormatUint(ws, 10)
				}
				status, body := testkit.Control(t, srv, "POST", path, fmt.Sprintf(`{"operation":%q,"status":%d}`, f.op, f.status))
				require.Equal(t, http.StatusOK, status, body)
			}
			method, path := or(tt.method, "GET"), or(tt.path, "/account")
			var body any
			if tt.body != "" {
				body = json.RawMessage(tt.body)
			}
			status, got, _ := testkit.REST(t, srv, tt.key, method, path, body)
			if tt.code == "" {
				assert.Less(t, status, 300, "%v", got)
			} else {
				assert.Equal(t, tt.status, status, "%v", got)
				assert.Equal(t, tt.code, got["error"].(map[string]any)["code"])
			}
			assert.Equal(t, tt.forced, forcedLeft(t, srv), "forced responses left")
		})
	}
}

// forcedLeft is how many forced responses are still to come, in every
// scope of the default fixture.
func forcedLeft(t *testing.T, srv *mediamock.Server) int {
	t.Helper()
	n := 0
	for ws := range uint64(8) {
		path := "/faults"
		if ws > 0 {
			path += "?workspace_id=" + strconv.FormatUint(ws, 10)
		}
		status, body := testkit.Control(t, srv, "GET", path, "")
		if status == http.StatusNotFound {
			continue
		}
		require.Equal(t, http.StatusOK, status, body)
		var f mediamock.Faults
		require.NoError(t, json.Unmarshal([]byte(body), &f))
		for _, fr := range f.Forced {
			n += fr.Remaining
		}
	}
	return n
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
