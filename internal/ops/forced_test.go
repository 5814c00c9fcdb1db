package ops_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/testkit"
)

// service is openapi.json, as the tests hold answers to it.
func service(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := contract.ParseEmbedded("openapi.json", mediamock.OpenAPIDocument)
	require.NoError(t, err)
	return c
}

// pathOf is an operation's path with its variables filled.
func pathOf(o contract.Operation) string {
	return strings.NewReplacer("{id}", "1").Replace(o.Path)
}

// raw sends a request to the REST API with the all-scopes key and returns
// the response and its bytes.
func raw(t *testing.T, srv *mediamock.Server, method, path string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	for k, v := range header {
		h[k] = v
	}
	return testkit.Send(t, srv, method, mediamock.BasePath+path, "", h, body)
}

// violations are the violations of a validation_failed error.
func violations(t *testing.T, err error) []problem.Violation {
	t.Helper()
	require.Error(t, err)
	e := problem.AsError(err)
	require.Equal(t, "validation_failed", e.Code, "%v", err)
	return e.Details["violations"].([]problem.Violation)
}

// TestEveryDeclaredStatusOnDemand: for every operation and every status it
// declares, a status rule makes it answer that status, in strict mode (an
// answer that breaks openapi.json would be a 500): an error status with
// the spec's error object carrying the document's first code for it and
// the headers the spec prescribes, a success with a named example of the
// document.
func TestEveryDeclaredStatusOnDemand(t *testing.T) {
	api := service(t)
	srv := mediamock.RunT(t) // strict
	for _, o := range api.Operations() {
		if o.Scope == "" {
			continue // the document itself: no operation of the pipeline
		}
		require.NoError(t, srv.Advance(time.Minute)) // a window of its own
		for _, st := range api.DeclaredStatuses(o.ID) {
			t.Run(o.ID+"/"+strconv.Itoa(st), func(t *testing.T) {
				spec := mediamock.FaultSpec{Kind: "status", Operation: o.ID, Status: st, First: 1}
				var example string
				if st < 400 {
					names := api.Examples(o.ID, st)
					require.NotEmpty(t, names, "%s has an example of its %d answer", o.ID, st)
					spec.Example = names[0]
					b, _ := api.Example(o.ID, st, names[0])
					example = string(b)
				}
				_, err := srv.AddFault(spec)
				require.NoError(t, err)
				resp, body := raw(t, srv, o.Method, pathOf(o), nil, "")
				require.Equal(t, st, resp.StatusCode, body)
				assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Limit"))
				assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Remaining"))
				assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Reset"))
				if st < 400 {
					assert.JSONEq(t, example, body)
					return
				}
				assert.Empty(t, api.CheckAnswer(o.ID, st, []byte(body)), "a valid error object")
				assert.Equal(t, api.ErrorCodes(o.ID, st)[0], testkit.ErrorCode(t, body))
				if st == http.StatusTooManyRequests {
					assert.NotEmpty(t, resp.Header.Get("Retry-After"))
					assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"))
				}
			})
		}
	}
}

// A rule may name the code and message of its error object, among the
// codes the document allows for the status; the shorthand and the
// Mock-Fault header take any declared status too.
func TestForcedCodesAndShorthands(t *testing.T) {
	srv := mediamock.RunT(t)
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "createPublication", Status: 403, Code: "publishing_not_allowed", Message: "No publishing on this plan."})
	require.NoError(t, err)
	resp, body := raw(t, srv, "POST", "/social/publications", nil, `{}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.JSONEq(t, `{"error":{"code":"publishing_not_allowed","message":"No publishing on this plan."}}`, body)

	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAccount", Status: 403, Code: "not_found"})
	v := violations(t, err)
	require.Len(t, v, 1)
	assert.Equal(t, "code", v[0].Field)
	assert.Equal(t, []any{"insufficient_scope", "publishing_not_allowed"}, v[0].Allowed)

	require.NoError(t, srv.ForceResponses("getAsset", http.StatusNotFound, 1))
	resp, body = raw(t, srv, "GET", "/assets/1", nil, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "not_found", testkit.ErrorCode(t, body))
	resp, _ = raw(t, srv, "GET", "/assets/1", nil, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "spent after one")

	resp, body = raw(t, srv, "GET", "/assets/1", map[string]string{"Mock-Fault": "status; status=404"}, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	resp, body = raw(t, srv, "POST", "/generations", map[string]string{"Mock-Fault": "status; status=402"}, `{}`)
	assert.Equal(t, http.StatusPaymentRequired, resp.StatusCode, body)
	e := testkit.JSON(t, body)["error"].(map[string]any)
	assert.Equal(t, "insufficient_credits", e["code"])
	assert.Contains(t, e["details"], "balance", "the seed's 402 gives the balance and the amount required")
}

// A status the targeted operation does not declare is refused with the
// list of those it declares: by a rule, the shorthand and the Mock-Fault
// header alike.
func TestUndeclaredStatusRefused(t *testing.T) {
	srv := mediamock.RunT(t)
	declared := []any{200, 401, 403, 429, 500, 503}
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAccount", Status: 404})
	v := violations(t, err)
	require.Len(t, v, 1)
	assert.Equal(t, "status", v[0].Field)
	assert.Equal(t, declared, v[0].Allowed)
	assert.Contains(t, v[0].Reason, "getAccount does not declare 404")

	status, body := testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"getAccount","status":404}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "getAccount does not declare 404")

	resp, body := raw(t, srv, "GET", "/account", map[string]string{"Mock-Fault": "status; status=404"}, "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	var got struct {
		Error struct {
			Details struct {
				Violations []problem.Violation `json:"violations"`
			} `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Len(t, got.Error.Details.Violations, 1)
	assert.Equal(t, "Mock-Fault: status", got.Error.Details.Violations[0].Field)
	assert.Equal(t, []any{200.0, 401.0, 403.0, 429.0, 500.0, 503.0}, got.Error.Details.Violations[0].Allowed)

	// A rule of every operation takes an error status every one declares.
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Status: 404})
	v = violations(t, err)
	assert.Equal(t, []any{401, 403, 429, 500, 503}, v[0].Allowed)
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Status: 403})
	require.NoError(t, err)
}

// A rule that rehearses drift answers what the document does not declare;
// the journal marks the answer outside the contract and the client report
// names it. Strict mode lets it through: it is outside on purpose.
func TestDriftIsMarked(t *testing.T) {
	srv := mediamock.RunT(t)
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAccount", Status: 418, Drift: true, First: 1})
	require.NoError(t, err)
	resp, body := raw(t, srv, "GET", "/account", nil, "")
	assert.Equal(t, http.StatusTeapot, resp.StatusCode, body)
	assert.Equal(t, "im_a_teapot", testkit.ErrorCode(t, body))
	assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Limit"))

	e := srv.Journal(mediamock.JournalFilter{Operation: "getAccount", Limit: 1})
	require.Len(t, e, 1)
	assert.Equal(t, "getAccount does not declare 418", e[0].OutsideContract)
	r, err := srv.Report()
	require.NoError(t, err)
	i := slices.IndexFunc(r.Findings, func(f mediamock.ClientFinding) bool { return f.ID == "outside-contract" })
	require.GreaterOrEqual(t, i, 0, "the report names the answer: %+v", r.Findings)
	assert.Equal(t, []string{e[0].ID}, r.Findings[i].RequestIDs)

	// An answer the document allows is never marked.
	resp, _ = raw(t, srv, "GET", "/account", nil, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, srv.Journal(mediamock.JournalFilter{Operation: "getAccount", Limit: 1})[0].OutsideContract)
}

// accountBody is an answer of getAccount that conforms, written with
// spaces no encoder would write: served byte for byte, it stays so.
const accountBody = `{ "object" : "account", "workspace_id": 7, "workspace_name": "Byte  for byte", "plan": "pro", "credits_balance": 12,
  "rate_limit_per_minute": 120, "scopes": ["read"], "token_type": "api_key", "publishing_allowed": false, "monthly_gifts": [] }`

// A custom body that violates the operation's response schema is refused
// with its violations; a conforming one is served byte for byte on REST
// and inside the MCP tool result, with the mock's own headers.
func TestCustomBodies(t *testing.T) {
	srv := mediamock.RunT(t)
	_, err := srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAccount", Status: 200, Body: json.RawMessage(`{"object":"account","credits_balance":"many"}`)})
	v := violations(t, err)
	fields := make([]string, len(v))
	for i, x := range v {
		fields[i] = x.Field
	}
	assert.Contains(t, fields, "body.credits_balance")
	assert.Contains(t, fields, "body.workspace_id")

	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAccount", Status: 200})
	assert.Contains(t, violations(t, err)[0].Reason, "a success: give its body")

	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAccount", Status: 200, Body: json.RawMessage(accountBody)})
	require.NoError(t, err)
	resp, body := raw(t, srv, "GET", "/account", nil, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, accountBody, body, "byte for byte")
	assert.Equal(t, strconv.Itoa(len(accountBody)), resp.Header.Get("Content-Length"))
	assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Remaining"))
	assert.NotEmpty(t, resp.Header.Get("X-Request-Id"))

	line := mcpCall(t, srv, "get_account", `{}`)
	assert.Contains(t, line, `"structuredContent":`+strings.ReplaceAll(accountBody, "\n", " "),
		"the tool result carries the body byte for byte (its line breaks as spaces: an MCP message is one line)")

	// An error body too, and a body that breaks the schema with drift.
	errBody := `{"error":{"code":"not_found","message":"Gone with the wind."}}`
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAsset", Status: 404, Body: json.RawMessage(errBody), First: 1})
	require.NoError(t, err)
	resp, body = raw(t, srv, "GET", "/assets/1", nil, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, errBody, body)
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "status", Operation: "getAsset", Status: 404, Body: json.RawMessage(`{"oops":true}`), Drift: true, First: 1})
	require.NoError(t, err)
	resp, body = raw(t, srv, "GET", "/assets/1", nil, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, `{"oops":true}`, body)
	e := srv.Journal(mediamock.JournalFilter{Operation: "getAsset", Limit: 1})
	assert.Contains(t, e[0].OutsideContract, "the body breaks getAsset's 404 answer")
}

// Prism's Prefer header, where the Mock-Fault header is honoured: code
// answers that status, example a named example of the document, dynamic
// is answered by the simulation; the same checks hold.
func TestPreferHeader(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, body := raw(t, srv, "GET", "/assets/1", map[string]string{"Prefer": "code=404"}, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, body)
	assert.Equal(t, "not_found", testkit.ErrorCode(t, body))
	e := srv.Journal(mediamock.JournalFilter{Limit: 1})[0]
	assert.Equal(t, "status", e.Fault)
	assert.Equal(t, "prefer", e.FaultRule)

	api := service(t)
	want, ok := api.Example("getAsset", 200, "processing_video")
	require.True(t, ok)
	for _, prefer := range []string{"example=processing_video", "code=200, example=processing_video", "dynamic=false; example=processing_video"} {
		resp, body = raw(t, srv, "GET", "/assets/1", map[string]string{"Prefer": prefer}, "")
		assert.Equal(t, http.StatusOK, resp.StatusCode, prefer)
		assert.JSONEq(t, string(want), body, prefer)
	}
	resp, body = raw(t, srv, "GET", "/assets/1", map[string]string{"Prefer": "dynamic=true"}, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, float64(1), testkit.JSON(t, body)["assets"].([]any)[0].(map[string]any)["id"], "the simulation answers")

	for prefer, field := range map[string]string{"code=404": "Prefer: code", "example=nothing": "Prefer: example", "code=teapot": "Prefer: code"} {
		resp, body = raw(t, srv, "GET", "/account", map[string]string{"Prefer": prefer}, "")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, prefer)
		assert.Contains(t, body, `"field":"`+field+`"`, prefer)
	}
	resp, body = raw(t, srv, "GET", "/account", map[string]string{"Prefer": "return=minimal, respond-async"}, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "other preferences are ignored: %s", body)

	closed := mediamock.RunT(t, mediamock.WithControlToken("secret"))
	resp, _ = raw(t, closed, "GET", "/assets/1", map[string]string{"Prefer": "code=404"}, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a server with a control token ignores it, as it ignores Mock-Fault")
}

// A request without a key answers 401 with the anonymous window's
// X-RateLimit-*: the anonymous window counts it, no workspace's does.
func TestUnauthorizedCarriesTheAnonymousWindow(t *testing.T) {
	srv := mediamock.RunT(t)
	ws, ok := srv.WorkspaceID(mediamock.KeyAllScopes)
	require.True(t, ok)
	before, err := srv.Engine().WorkspaceDetail(ws)
	require.NoError(t, err)
	var remaining []string
	for range 3 {
		resp, body := testkit.Send(t, srv, "GET", mediamock.BasePath+"/account", "", nil, "")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
		assert.Equal(t, "20", resp.Header.Get("X-RateLimit-Limit"))
		assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Reset"))
		remaining = append(remaining, resp.Header.Get("X-RateLimit-Remaining"))
	}
	assert.Equal(t, []string{"19", "18", "17"}, remaining)
	resp, _ := testkit.Send(t, srv, "GET", mediamock.BasePath+"/account", "", map[string]string{"Authorization": "Bearer mk_unknown"}, "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, "16", resp.Header.Get("X-RateLimit-Remaining"))
	after, err := srv.Engine().WorkspaceDetail(ws)
	require.NoError(t, err)
	assert.Equal(t, before.Rate.Remaining, after.Rate.Remaining, "no workspace's window moved")
}

// mcpCall calls a tool over stdio and returns the line that answers it.
func mcpCall(t *testing.T, srv *mediamock.Server, tool, args string) string {
	t.Helper()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`,
	}, "\n") + "\n"
	inR, inW := io.Pipe()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeMCP(context.Background(), inR, pw, mediamock.KeyAllScopes); pw.Close() }()
	go io.WriteString(inW, in)
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":2`) {
			line := sc.Text()
			inW.Close()
			go io.Copy(io.Discard, pr)
			require.NoError(t, <-done)
			return line
		}
	}
	t.Fatalf("no answer to the tool call: %v", sc.Err())
	return ""
}
