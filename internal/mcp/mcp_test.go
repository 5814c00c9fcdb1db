package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/testkit"
)

// toolOps are the tools, one per operation of openapi.json that names one
// (x-mcp-tool), in the document's order.
var toolOps = sync.OnceValue(func() []struct{ tool, op, scope string } {
	api, err := contract.Parse("openapi.json", mediamock.OpenAPIDocument)
	if err != nil {
		panic(err)
	}
	var out []struct{ tool, op, scope string }
	for _, op := range api.Operations() {
		if op.Tool != "" {
			out = append(out, struct{ tool, op, scope string }{op.Tool, op.ID, op.Scope})
		}
	}
	return out
})

// snake spells an operationId the way tools are named: getAccount, get_account.
func snake(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestToolsAreTheOperationsOfOpenAPI(t *testing.T) {
	srv := mediamock.RunT(t)
	c := connect(t, srv, mediamock.KeyAllScopes, sessioned)
	res, err := c.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, len(toolOps()))
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Summary     string `json:"summary"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(mediamock.OpenAPIDocument, &doc))
	summaries := map[string]string{}
	for _, item := range doc.Paths {
		for _, op := range item {
			summaries[op.OperationID] = op.Summary
		}
	}
	tools := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for _, want := range toolOps() {
		tool := tools[want.tool]
		t.Run(want.tool, func(t *testing.T) {
			require.NotNil(t, tool)
			assert.Equal(t, snake(want.op), want.tool, "a tool is named for its operation")
			assert.Equal(t, want.tool, tool.Name)
			assert.Equal(t, summaries[want.op], tool.Title)
			assert.Contains(t, tool.Description, "Required scope: `"+want.scope+"`.")
			schema := tool.InputSchema.(map[string]any)
			assert.Equal(t, "object", schema["type"])
			assert.Equal(t, false, schema["additionalProperties"])
			require.NotNil(t, tool.Annotations)
			read := strings.HasPrefix(want.tool, "get_") || strings.HasPrefix(want.tool, "list_")
			assert.Equal(t, read, tool.Annotations.ReadOnlyHint)
			if read {
				return
			}
			require.NotNil(t, tool.Annotations.DestructiveHint)
			require.NotNil(t, tool.Annotations.OpenWorldHint)
			public := want.tool == "create_publication"
			assert.Equal(t, public, *tool.Annotations.DestructiveHint)
			assert.Equal(t, public, *tool.Annotations.OpenWorldHint)
			if public {
				assert.Contains(t, tool.Description, "Posts publicly; call only on explicit user intent")
			}
		})
	}

	// The schemas come from openapi.json: parameters and body, merged.
	schema := func(name string) map[string]any {
		for _, tool := range res.Tools {
			if tool.Name == name {
				return tool.InputSchema.(map[string]any)
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}
	gen := schema("create_generation")
	assert.ElementsMatch(t, []any{"modality", "model_id", "prompt"}, gen["required"])
	assert.ElementsMatch(t, fixtures.ModalityNames(), gen["properties"].(map[string]any)["modality"].(map[string]any)["enum"])
	assert.EqualValues(t, 5000, gen["properties"].(map[string]any)["prompt"].(map[string]any)["maxLength"])
	get := schema("get_generation")
	assert.Equal(t, []any{"id"}, get["required"])
	assert.EqualValues(t, 55, get["properties"].(map[string]any)["wait_seconds"].(map[string]any)["maximum"])
	upload := schema("create_upload")
	assert.Len(t, upload["properties"], 2, "the JSON form only: image_url and title")
	assert.Contains(t, schema("create_encore_creation")["description"], "xactly one of image_url, asset_id and character_id")
}

// TestEveryToolAgainstFixtureKeys calls each tool with the all-scopes key
// and checks it answers what its operation answers over REST; then each
// scope-only key is refused the tools of the other scopes.
func TestEveryToolAgainstFixtureKeys(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, version := range []string{latest, sessioned} {
		t.Run("protocol "+version, func(t *testing.T) {
			c := connect(t, srv, mediamock.KeyAllScopes, version)
			called := map[string]bool{}
			call := func(name string, args map[string]any) *toolResult {
				called[name] = true
				return c.call(name, args).ok()
			}
			acct := call("get_account", nil)
			assert.Equal(t, "account", acct.JSON["object"])
			call("list_models", map[string]any{"modality": "image"})
			gen := call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "lighthouse at dusk", "wait_seconds": 55})
			assert.Equal(t, "completed", gen.JSON["status"])
			asset := gen.id("assets.0.id")
			assert.Equal(t, "completed", call("get_generation", map[string]any{"id": asset}).JSON["status"])
			assert.Equal(t, "list", call("list_assets", map[string]any{"limit": 5, "kind": "image"}).JSON["object"])
			assert.EqualValues(t, asset, call("get_asset", map[string]any{"id": asset}).id("assets.0.id"))
			up := call("create_upload", map[string]any{"image_url": "https://images.example.com/portrait.jpg", "title": "portrait"})
			assert.Equal(t, "image", up.JSON["kind"], "an upload is an image asset")
			assert.EqualValues(t, 0, up.JSON["credits"])
			effects := call("list_encore_effects", nil)
			effect := effects.JSON["data"].([]any)[0].(map[string]any)["slug"]
			enc := call("create_encore_creation", map[string]any{"effect": effect, "asset_id": up.id("id"), "wait_seconds": 55})
			assert.Equal(t, "completed", call("get_encore_creation", map[string]any{"id": enc.id("id"), "wait_seconds": 55}).JSON["status"], "an effect renders in 50 to 60 s")
			call("list_characters", nil)
			call("list_brand_kits", map[string]any{"limit": 2})
			call("list_projects", nil)
			call("list_social_accounts", nil)
			call("list_publications", map[string]any{"status": "published"})
			pub := call("create_publication", map[string]any{"asset_ids": []int64{asset}, "caption": "from MCP", "platforms": []string{"instagram"}})
			assert.EqualValues(t, pub.id("id"), call("get_publication", map[string]any{"id": pub.id("id")}).id("id"))
			// The tools without required arguments need no scenario: each is
			// called as it is. One that takes required arguments belongs above.
			tools, err := c.ListTools(context.Background(), nil)
			require.NoError(t, err)
			for _, tl := range tools.Tools {
				if called[tl.Name] {
					continue
				}
				if _, required := tl.InputSchema.(map[string]any)["required"]; required {
					t.Errorf("tool %s takes required arguments: call it in this scenario", tl.Name)
					continue
				}
				call(tl.Name, nil)
			}
			assert.Len(t, called, len(toolOps()), "every tool was called")

			// The same answer as REST, byte for byte but for the links' host.
			status, body, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/generations/"+itoa(asset), nil)
			require.Equal(t, http.StatusOK, status)
			mcpBody := call("get_generation", map[string]any{"id": asset}).JSON
			assert.Equal(t, body, mcpBody)
		})
	}

	scoped := []struct {
		key, tool string
		args      map[string]any
		want      string // error code, "" for success
	}{
		{mediamock.KeyReadOnly, "get_account", nil, ""},
		{mediamock.KeyReadOnly, "create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"}, "insufficient_scope"},
		{mediamock.KeyReadOnly, "create_upload", map[string]any{"image_url": "https://images.example.com/a.jpg"}, "insufficient_scope"},
		{mediamock.KeyReadOnly, "create_publication", map[string]any{"asset_ids": []int{1}, "caption": "x", "platforms": []string{"x"}}, "insufficient_scope"},
		{mediamock.KeyGenerateOnly, "list_assets", nil, "insufficient_scope"},
		{mediamock.KeyGenerateOnly, "create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"}, ""},
		{mediamock.KeyPublishOnly, "get_account", nil, "insufficient_scope"},
		{mediamock.KeyPublishOnly, "create_encore_creation", map[string]any{"effect": "golden-hour", "image_url": "https://images.example.com/a.jpg"}, "insufficient_scope"},
		{mediamock.TokenOAuth, "list_publications", nil, ""},
		{mediamock.TokenOAuth, "create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"}, "insufficient_scope"},
	}
	for _, tc := range scoped {
		t.Run(tc.key+" "+tc.tool, func(t *testing.T) {
			r := connect(t, srv, tc.key, sessioned).call(tc.tool, tc.args)
			assert.Equal(t, tc.want, r.Code(), "%s", r.Raw)
			if tc.want == "insufficient_scope" {
				details := r.JSON["error"].(map[string]any)["details"].(map[string]any)
				assert.NotEmpty(t, details["required_scope"])
				assert.True(t, strings.HasPrefix(r.text(), "Error 403 insufficient_scope"), r.text())
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestBadArgumentsGetTheRESTViolations: a tool's arguments are judged by
// openapi.json exactly as the REST request would be.
func TestBadArgumentsGetTheRESTViolations(t *testing.T) {
	srv := mediamock.RunT(t)
	c := connect(t, srv, mediamock.KeyAllScopes, latest)
	cases := []struct {
		name, tool, method, path string
		args                     map[string]any
	}{
		{"body rules", "create_generation", "POST", "/generations",
			map[string]any{"modality": "painting", "model_id": "imagen-4", "prompt": strings.Repeat("x", 5001), "count": 9, "colour": "red"}},
		{"missing required", "create_generation", "POST", "/generations", map[string]any{"prompt": "x"}},
		{"one of", "create_encore_creation", "POST", "/encore/creations",
			map[string]any{"effect": "golden-hour", "asset_id": 1, "image_url": "https://images.example.com/a.jpg", "wait_seconds": 99}},
		{"query rules", "list_assets", "GET", "/assets?limit=0&kind=sculpture", map[string]any{"limit": 0, "kind": "sculpture"}},
		{"path rule", "get_generation", "GET", "/generations/0", map[string]any{"id": 0}},
		{"engine rule", "create_generation", "POST", "/generations", map[string]any{"modality": "image", "model_id": "no-such-model", "prompt": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "POST" {
				body = tc.args
			}
			status, want, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, tc.method, tc.path, body)
			require.Equal(t, http.StatusBadRequest, status, "%v", want)
			got := c.call(tc.tool, tc.args)
			require.True(t, got.IsError)
			assert.Equal(t, want, got.JSON, "the same error object as REST")
		})
	}
	// What only a tool can get wrong: a missing path argument, an unknown
	// argument of a tool without a body.
	got := c.call("get_asset", map[string]any{"wait": 3})
	assert.Equal(t, "validation_failed", got.Code())
	violations := got.JSON["error"].(map[string]any)["details"].(map[string]any)["violations"]
	assert.Equal(t, []any{
		map[string]any{"in": "path", "field": "id", "reason": "is required"},
		map[string]any{"in": "arguments", "field": "wait", "reason": "unknown field", "allowed": []any{"id", "wait_seconds"}},
	}, violations)
}

// TestLongWaitSendsProgressAndEndsOnCancel: on the manual clock a call with
// wait_seconds waits for the test to move time; the client's progress token
// brings a notification per status, and cancelling the call ends the wait.
func TestLongWaitSendsProgressAndEndsOnCancel(t *testing.T) {
	for _, version := range []string{latest, sessioned} {
		t.Run("protocol "+version, func(t *testing.T) {
			srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
			c := connect(t, srv, mediamock.KeyAllScopes, version)
			done := make(chan *toolResult, 1)
			go func() {
				done <- c.callMeta("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4",
					"prompt": "lighthouse [mock:delay=20]", "wait_seconds": 55}, sdk.Meta{"progressToken": "gen-1"})
			}()
			c.awaitProgress("a first progress notification", func(seen []*sdk.ProgressNotificationParams) bool { return len(seen) >= 1 })
			require.NoError(t, srv.Advance(25*time.Second))
			res := testkit.Receive(t, done, "the call's result after the job completed")
			assert.Equal(t, "completed", res.ok().JSON["status"])
			// The notifications came before the result on the call's stream;
			// the client hands them to its handler on its own goroutine.
			c.awaitProgress("the completed notification", func(seen []*sdk.ProgressNotificationParams) bool {
				return len(seen) > 0 && seen[len(seen)-1].Message == "completed"
			})
			var messages []string
			var values []float64
			for _, p := range c.progressSeen() {
				assert.Equal(t, "gen-1", p.ProgressToken)
				messages, values = append(messages, p.Message), append(values, p.Progress)
			}
			assert.Equal(t, "completed", messages[len(messages)-1], "%v", messages)
			assert.True(t, slices.IsSorted(values) && len(slices.Compact(slices.Clone(values))) == len(values), "progress only grows: %v", values)

			// Cancelling ends the wait: the server's long poll lets go of the
			// job, and the call ends (and is counted) at once.
			stuck := c.call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "never [mock:stuck]"}).ok()
			before := len(c.progressSeen())
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, &sdk.CallToolParams{Name: "get_generation", Meta: sdk.Meta{"progressToken": "wait-1"},
					Arguments: map[string]any{"id": stuck.id("assets.0.id"), "wait_seconds": 55}})
				errc <- err
			}()
			c.awaitProgress("the server waiting", func(seen []*sdk.ProgressNotificationParams) bool { return len(seen) > before })
			cancel()
			assert.ErrorIs(t, testkit.Receive(t, errc, "the end of the cancelled call"), context.Canceled)
			// Nothing signals the count: the client's cancel can end the
			// exchange (and the journal records it) before the server's
			// tool call returns and is counted. Poll, bounded.
			testkit.Poll(t, "getGeneration counted once for MCP", func() bool {
				for _, oc := range srv.Coverage().Operations {
					if oc.Operation == "getGeneration" {
						return oc.Fronts["mcp"] == 1
					}
				}
				return false
			})
		})
	}
}

func TestResources(t *testing.T) {
	srv := mediamock.RunT(t)
	c := connect(t, srv, mediamock.KeyAllScopes, sessioned)
	ctx := context.Background()
	list, err := c.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list.Resources, 1)
	assert.Equal(t, "mediamock://models", list.Resources[0].URI)
	templates, err := c.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, templates.ResourceTemplates, 1)
	assert.Equal(t, "mediamock://assets/{id}", templates.ResourceTemplates[0].URITemplate)

	models, err := c.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mediamock://models"})
	require.NoError(t, err)
	assert.Equal(t, "application/json", models.Contents[0].MIMEType)
	assert.Contains(t, models.Contents[0].Text, `"imagen-4"`)

	gen := c.call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a resource", "wait_seconds": 55}).ok()
	id := gen.id("assets.0.id")
	var link *sdk.ResourceLink
	for _, content := range gen.Content {
		if l, ok := content.(*sdk.ResourceLink); ok {
			link = l
		}
	}
	require.NotNil(t, link, "a completed asset is linked to its resource")
	assert.Equal(t, "mediamock://assets/"+itoa(id), link.URI)

	file, err := c.ReadResource(ctx, &sdk.ReadResourceParams{URI: link.URI})
	require.NoError(t, err)
	require.Len(t, file.Contents, 1)
	assert.Equal(t, "image/png", file.Contents[0].MIMEType)
	assert.Equal(t, "\x89PNG", string(file.Contents[0].Blob[:4]))
	// The same bytes as the file's address serves.
	resp, err := srv.Client().Get(gen.JSON["assets"].([]any)[0].(map[string]any)["url"].(string))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.EqualValues(t, resp.ContentLength, len(file.Contents[0].Blob))

	// Another workspace does not see it; a key without read is refused.
	_, err = connect(t, srv, mediamock.KeyFreePlan, sessioned).ReadResource(ctx, &sdk.ReadResourceParams{URI: link.URI})
	assert.ErrorContains(t, err, "not found")
	_, err = connect(t, srv, mediamock.KeyGenerateOnly, sessioned).ReadResource(ctx, &sdk.ReadResourceParams{URI: link.URI})
	assert.ErrorContains(t, err, "insufficient_scope")
	// An asset still running has no file yet.
	running := c.call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "later [mock:stuck]"}).ok()
	_, err = c.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mediamock://assets/" + itoa(running.id("assets.0.id"))})
	assert.ErrorContains(t, err, "asset_not_ready")
}

func TestHTTPAuthenticationAndGuards(t *testing.T) {
	srv := mediamock.RunT(t)
	cases := []struct {
		name    string
		header  http.Header
		status  int
		code    string
		wwwAuth bool
	}{
		{"no credentials", nil, http.StatusUnauthorized, "missing_credentials", true},
		{"not bearer", http.Header{"Authorization": {"Basic abc"}}, http.StatusUnauthorized, "invalid_credentials", true},
		{"unknown key", auth("mk_test_nope"), http.StatusUnauthorized, "invalid_credentials", true},
		{"foreign origin", http.Header{"Authorization": {"Bearer " + mediamock.KeyAllScopes}, "Origin": {"https://evil.example"}}, http.StatusForbidden, "forbidden_origin", false},
		{"rebound host", http.Header{"Authorization": {"Bearer " + mediamock.KeyAllScopes}, "Host": {"evil.example:80"}}, http.StatusForbidden, "forbidden_host", false},
		{"bad accept", http.Header{"Authorization": {"Bearer " + mediamock.KeyAllScopes}, "Accept": {"text/html"}}, http.StatusBadRequest, "invalid_mcp_request", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader(initialize))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				if k == "Host" {
					req.Host = v[0]
					continue
				}
				req.Header[k] = v
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.code, body.Error.Code, body.Error.Message)
			assert.NotEmpty(t, body.Error.Message)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			if tc.wwwAuth {
				assert.True(t, strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer "), resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	// A loopback origin (a local tool's page) is welcome.
	resp, _ := rpc(t, srv, http.Header{"Authorization": {"Bearer " + mediamock.KeyAllScopes}, "Origin": {"http://localhost:6274"}}, initialize)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestSessionsBelongToTheirWorkspace: a session id is handed out at
// initialize and answers only to keys of the workspace that opened it.
func TestSessionsBelongToTheirWorkspace(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, _ := rpc(t, srv, auth(mediamock.KeyAllScopes), initialize)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	session := resp.Header.Get("Mcp-Session-Id")
	require.True(t, strings.HasPrefix(session, "mcs_"), session)

	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	h := auth(mediamock.KeyReadOnly) // the same workspace, another key
	h.Set("Mcp-Session-Id", session)
	h.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, body := rpc(t, srv, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	resp, body = rpc(t, srv, h, list)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"get_account"`)

	h.Set("Authorization", "Bearer "+mediamock.KeyFreePlan) // another workspace
	resp, body = rpc(t, srv, h, list)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, `"code":"forbidden"`)

	h.Set("Mcp-Session-Id", "mcs_unknown")
	resp, body = rpc(t, srv, h, list)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, body, `"code":"not_found"`)
}

// TestRateHeadersOnMCPResponses: every authenticated MCP response reports
// the window; a tool call's response reports it after the call.
func TestRateHeadersOnMCPResponses(t *testing.T) {
	srv := mediamock.RunT(t)
	h := auth(mediamock.KeyFreePlan)
	resp, _ := rpc(t, srv, h, initialize)
	assert.Equal(t, "20", resp.Header.Get("X-RateLimit-Limit"))
	assert.Equal(t, "20", resp.Header.Get("X-RateLimit-Remaining"))
	assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Reset"))
	h.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	rpc(t, srv, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body := rpc(t, srv, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`)
	assert.Contains(t, body, `"workspace_name"`)
	assert.Equal(t, "19", resp.Header.Get("X-RateLimit-Remaining"), "the window after the call")
	resp, _ = rpc(t, srv, h, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	assert.Equal(t, "19", resp.Header.Get("X-RateLimit-Remaining"), "tools/list does not count")
	resp, _ = rpc(t, srv, h, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	assert.Equal(t, "19", resp.Header.Get("X-RateLimit-Remaining"), "ping does not count")

	// The sessionless revision answers a call as one JSON body, with the
	// same headers.
	h2 := auth(mediamock.KeyFreePlan)
	h2.Set("Mcp-Protocol-Version", "2026-07-28")
	h2.Set("Mcp-Method", "tools/call")
	h2.Set("Mcp-Name", "get_account")
	resp, body = rpc(t, srv, h2, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_account","arguments":{},
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), body)
	assert.Equal(t, "18", resp.Header.Get("X-RateLimit-Remaining"), body)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
}

func TestJournalAndCoverageCountMCPCalls(t *testing.T) {
	srv := mediamock.RunT(t)
	c := connect(t, srv, mediamock.KeyReadOnly, sessioned)
	c.call("get_account", nil).ok()
	c.call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"})
	testkit.REST(t, srv, mediamock.KeyReadOnly, "GET", "/account", nil)

	// Over SSE the client has the result a moment before the exchange ends
	// and is journaled: wait for the entry (bounded), not for time.
	var calls []mediamock.JournalEntry
	initialized := func() bool {
		for _, e := range srv.Journal(mediamock.JournalFilter{Front: "mcp"}) {
			if e.MCPMethod == "initialize" {
				return true
			}
		}
		return false
	}
	testkit.Await(t, testkit.Watch(t, srv), "the initialize and both tool calls journaled", func() bool {
		calls = srv.Journal(mediamock.JournalFilter{Front: "mcp", Operation: "createGeneration"})
		return len(calls) == 1 && len(srv.Journal(mediamock.JournalFilter{Front: "mcp", Operation: "getAccount"})) > 0 && initialized()
	})
	e := calls[0]
	assert.Equal(t, "POST", e.Method)
	assert.Equal(t, "/mcp", e.Path)
	assert.Equal(t, "tools/call", e.MCPMethod)
	assert.Equal(t, http.StatusForbidden, e.Status, "the status the operation answered")
	assert.Equal(t, "insufficient_scope", e.ErrorCode)
	assert.NotZero(t, e.WorkspaceID)
	assert.Contains(t, e.RequestBody, `"create_generation"`)
	assert.NotEmpty(t, srv.Journal(mediamock.JournalFilter{Front: "mcp", Operation: "getAccount"}))
	assert.Len(t, srv.Journal(mediamock.JournalFilter{Front: "rest", Operation: "getAccount"}), 1)
	var methods []string
	for _, e := range srv.Journal(mediamock.JournalFilter{Front: "mcp"}) {
		methods = append(methods, e.MCPMethod)
	}
	assert.Contains(t, methods, "initialize")

	cov := srv.Coverage()
	for _, oc := range cov.Operations {
		switch oc.Operation {
		case "getAccount":
			assert.Equal(t, map[string]int{"rest": 1, "mcp": 1}, oc.Fronts)
			assert.Equal(t, 2, count(oc, 200))
		case "createGeneration":
			assert.Equal(t, map[string]int{"mcp": 1}, oc.Fronts)
			assert.Equal(t, 1, count(oc, 403))
		}
	}
}

func count(oc mediamock.OperationCoverage, status int) int {
	for _, sc := range oc.Statuses {
		if sc.Status == status {
			return sc.Count
		}
	}
	return 0
}

// TestFaultsApplyToToolCalls: forced responses and magic inputs reach MCP
// through the same gate and engine.
func TestFaultsApplyToToolCalls(t *testing.T) {
	srv := mediamock.RunT(t)
	c := connect(t, srv, mediamock.KeyAllScopes, latest)
	require.NoError(t, srv.ForceResponses("getAccount", 503, 1))
	assert.Equal(t, "service_unavailable", c.call("get_account", nil).Code())
	c.call("get_account", nil).ok()
	gen := c.call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x [mock:fail]", "wait_seconds": 55}).ok()
	assert.Equal(t, "failed", gen.JSON["status"])
}

// TestStrictModeChecksToolResults: in strict mode a tool result is checked
// against the operation's response in openapi.json (RunT is strict); every
// call above passed it. Here the check itself is seen to run: the journal
// shows no response_validation_failed for a full round of tools.
func TestStrictModeChecksToolResults(t *testing.T) {
	srv := mediamock.RunT(t)
	c := connect(t, srv, mediamock.KeyAllScopes, latest)
	c.call("list_models", nil).ok()
	c.call("list_social_accounts", nil).ok()
	c.call("get_publication", map[string]any{"id": 999999})
	for _, e := range srv.Journal(mediamock.JournalFilter{Front: "mcp"}) {
		assert.NotEqual(t, "response_validation_failed", e.ErrorCode)
	}
}
