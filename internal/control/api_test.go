package control_test

// The control API over HTTP, as a container user in any language has it:
// faults, the clock, jobs, workspaces, the token, the journal, snapshots.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The same control, over HTTP only, as a container user in any language has.
func TestControlAPIOverHTTP(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })

	status, body := testkit.Control(t, srv, "POST", "/faults/fail-next", `{"count":1,"modality":"image","code":"content_policy"}`)
	require.Equal(t, http.StatusOK, status, body)
	gen := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"x"}`)
	require.Equal(t, "queued", gen["status"])

	status, body = testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"2m"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"now":"2026-01-05T09:02:00+00:00"`)

	id := int(gen["assets"].([]any)[0].(map[string]any)["id"].(float64))
	read := testkit.API(t, srv, "GET", fmt.Sprintf("/generations/%d", id), "")
	assert.Equal(t, "failed", read["status"])
	assert.Equal(t, "content_policy", read["assets"].([]any)[0].(map[string]any)["error"].(map[string]any)["code"])

	status, body = testkit.Control(t, srv, "GET", "/workspaces/1/ledger", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"type":"refund","amount":6,"balance_after":5000`)

	// Acting on jobs: stick one, then fail it; complete another.
	g2 := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"y"}`)
	id2 := int(g2["assets"].([]any)[0].(map[string]any)["id"].(float64))
	status, _ = testkit.Control(t, srv, "POST", fmt.Sprintf("/assets/%d/stick", id2), "")
	require.Equal(t, http.StatusOK, status)
	testkit.Control(t, srv, "POST", "/clock/advance", `{"seconds":3600}`)
	assert.Equal(t, "queued", testkit.API(t, srv, "GET", fmt.Sprintf("/assets/%d", id2), "")["status"], "stuck")
	status, body = testkit.Control(t, srv, "POST", fmt.Sprintf("/assets/%d/complete", id2), "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"status":"completed"`)
	status, body = testkit.Control(t, srv, "POST", fmt.Sprintf("/assets/%d/fail", id2), "")
	assert.Equal(t, http.StatusConflict, status, body)

	// Workspaces and keys made at run time work at once.
	status, body = testkit.Control(t, srv, "POST", "/workspaces", `{"name":"Tiny","plan":"free","credits":7,"token":"mk_test_tiny_ws"}`)
	require.Equal(t, http.StatusCreated, status, body)
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	req.Header.Set("Authorization", "Bearer mk_test_tiny_ws")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `"credits_balance":7`)
	assert.Equal(t, "20", resp.Header.Get("X-RateLimit-Limit"))

	// Bad control input gets the error object too.
	status, body = testkit.Control(t, srv, "POST", "/clock/advance", `{"seconds":-5}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `"validation_failed"`)
	status, body = testkit.Control(t, srv, "POST", "/clock/set", `{"time":"2020-01-01T00:00:00Z"}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "backwards")
	status, _ = testkit.Control(t, srv, "GET", "/health", "")
	assert.Equal(t, http.StatusOK, status)
	status, body = testkit.Control(t, srv, "GET", "/openapi.json", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, string(mediamock.ControlDocument), body)
}

func TestForcedResponsesAndLatency(t *testing.T) {
	srv := mediamock.RunT(t)
	status, body := testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"getAccount","status":503,"count":2}`)
	require.Equal(t, http.StatusOK, status, body)
	testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"*","status":429}`)
	for _, want := range []string{"service_unavailable", "service_unavailable", "rate_limited"} {
		got := testkit.API(t, srv, "GET", "/account", "")
		assert.Equal(t, want, got["error"].(map[string]any)["code"])
	}
	assert.Equal(t, "account", testkit.API(t, srv, "GET", "/account", "")["object"], "the faults are used up")

	// A forced 429's headers say what it says: nothing left, and when to
	// come back.
	testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"getAccount","status":429}`)
	status, _, h := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "0", h.Get("X-RateLimit-Remaining"))
	assert.Equal(t, "120", h.Get("X-RateLimit-Limit"))
	assert.NotEmpty(t, h.Get("Retry-After"))

	status, body = testkit.Control(t, srv, "PUT", "/faults/latency/listModels", `{"ms":250}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"latency_ms":{"listModels":250}`)
	status, body = testkit.Control(t, srv, "DELETE", "/faults", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"latency_ms":{}`)
}

func TestControlToken(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "s3cret-token" })
	status, body := testkit.Control(t, srv, "GET", "/clock", "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Contains(t, body, "invalid_control_token")
	status, _ = testkit.Control(t, srv, "GET", "/clock", "", "Authorization", "Bearer s3cret-token")
	assert.Equal(t, http.StatusOK, status)
	status, _ = testkit.Control(t, srv, "GET", "/health", "")
	assert.Equal(t, http.StatusOK, status, "the health check needs no token")
}

func TestJournalRecordsAndFilters(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.JournalSize = 3; o.JournalBodyBytes = 16 })
	testkit.API(t, srv, "GET", "/account", "")
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a long prompt that is cut"}`)
	testkit.API(t, srv, "GET", "/models?modality=3d", "")
	testkit.API(t, srv, "GET", "/nope", "")
	testkit.Control(t, srv, "GET", "/clock", "") // the control API is not recorded

	all := srv.Journal(mediamock.JournalFilter{})
	require.Len(t, all, 3, "the ring keeps the last three")
	assert.Equal(t, "/api/v1/nope", all[0].Path)
	assert.Equal(t, 404, all[0].Status)
	assert.Equal(t, "not_found", all[0].ErrorCode)
	gen := all[2]
	assert.Equal(t, "createGeneration", gen.Operation)
	assert.Equal(t, 201, gen.Status)
	assert.EqualValues(t, 1, gen.WorkspaceID)
	assert.Equal(t, `{"modality":"ima`, gen.RequestBody)
	assert.True(t, gen.RequestBodyTruncated)
	assert.Len(t, gen.ResponseBody, 16)
	assert.Equal(t, "modality=3d", all[1].Query)

	only := srv.Journal(mediamock.JournalFilter{Method: "POST"})
	require.Len(t, only, 1)
	status, body := testkit.Control(t, srv, "GET", "/journal?status=404", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"recorded":4`)
	assert.Contains(t, body, `"path":"/api/v1/nope"`)
	assert.NotContains(t, body, `"createGeneration"`)
	testkit.Control(t, srv, "DELETE", "/journal", "")
	assert.Empty(t, srv.Journal(mediamock.JournalFilter{}))
}

func TestSnapshotRestoreAndReset(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"before the snapshot"}`)
	status, snap := testkit.Control(t, srv, "GET", "/snapshot", "")
	require.Equal(t, http.StatusOK, status)
	srv.Advance(time.Hour)
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"after the snapshot"}`)
	assert.EqualValues(t, 3, len(assetsMatching(t, srv, "snapshot"))+1)

	status, body := testkit.Control(t, srv, "PUT", "/snapshot", snap, "Content-Type", "application/octet-stream")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"now":"2026-01-05T09:00:00+00:00"`, "the clock of the snapshot")
	assert.Len(t, assetsMatching(t, srv, "snapshot"), 1)

	status, body = testkit.Control(t, srv, "PUT", "/snapshot", "not a state file", "Content-Type", "application/octet-stream")
	assert.Equal(t, http.StatusBadRequest, status, body)

	status, body = testkit.Control(t, srv, "POST", "/reset", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, assetsMatching(t, srv, "snapshot"))
	assert.EqualValues(t, 5000, testkit.API(t, srv, "GET", "/account", "")["credits_balance"])
}

func assetsMatching(t *testing.T, srv *mediamock.Server, q string) []any {
	t.Helper()
	return testkit.API(t, srv, "GET", "/assets?query="+q, "")["data"].([]any)
}

// Every control handler is an operation of control.json, and every
// operation has a handler (control.json is read for its routes at start,
// and parsed on the first control request that needs it).
func TestControlRoutesAreInControlJSON(t *testing.T) {
	c, err := testkit.ControlContract()
	require.NoError(t, err)
	require.NoError(t, control.Check(mediamock.ControlDocument))
	routes, err := control.Routes(mediamock.ControlDocument)
	require.NoError(t, err)
	assert.ElementsMatch(t, routes, control.Operations())
	for _, op := range control.Operations() {
		assert.True(t, c.Has(op), "control route %s is not in control.json", op)
		if op == "getHealth" {
			continue
		}
		reach, _ := c.Extension(op, "x-sandbox")
		assert.Contains(t, []any{"scoped", "own", "shared"}, reach, "control.json: %s says in x-sandbox how a sandbox's token reaches it", op)
	}
}

// The check at start refuses a document whose operations and handlers
// differ, naming the operation.
func TestControlCheckRefusesAnOperationWithoutAHandler(t *testing.T) {
	doc := bytes.Replace(mediamock.ControlDocument, []byte(`"operationId": "getClock"`), []byte(`"operationId": "getTheClock"`), 1)
	require.NotEqual(t, mediamock.ControlDocument, doc)
	err := control.Check(doc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "without a handler: getTheClock")
}

// A 401 of the control API says how to authenticate (RFC 9110, section
// 15.5.2), as the control MCP server's does: a Bearer challenge of the
// control realm, with error="invalid_token" when a token was sent.
func TestControl401Challenges(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "s3cret-token" })
	for auth, want := range map[string]string{
		"":             `Bearer realm="control"`,
		"Basic eDp5":   `Bearer realm="control"`,
		"Bearer wrong": `Bearer realm="control", error="invalid_token"`,
		"bearer wrong": `Bearer realm="control", error="invalid_token"`,
	} {
		req := httptest.NewRequest("GET", srv.URL()+"/_mock/clock", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		assert.Equal(t, http.StatusUnauthorized, w.Code, auth)
		assert.Equal(t, want, w.Header().Get("WWW-Authenticate"), auth)
	}
	req := httptest.NewRequest("GET", srv.URL()+"/_mock/clock", nil)
	req.Header.Set("Authorization", "bearer s3cret-token")
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Header().Get("WWW-Authenticate"))
}
