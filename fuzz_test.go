package mediamock_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

var fuzzServer = sync.OnceValues(func() (*mediamock.Server, error) {
	return mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockVirtual, JournalSize: 50, MCPMaxWait: 1})
})

var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}

var fuzzTokens = []string{"", mediamock.KeyAllScopes, mediamock.KeyReadOnly, mediamock.KeyFreePlan, "mk_nope", "Basic abc"}

var fuzzTypes = []string{"", "application/json", "multipart/form-data; boundary=x", "text/plain", "application/json; charset=utf-8", "application/octet-stream"}

// fuzzSeed is one request of the seed corpus, with the status it gets
// from a fresh server when the seeds are sent in order.
type fuzzSeed struct {
	method       uint8
	path         string
	token, ctype uint8
	body         string
	status       int
}

// fuzzSeeds are one request of each kind the contract tests make, most of
// them answered with success, so that the fuzzer starts from the real
// paths (a handler's work, not its first refusal): a real image to upload,
// a real file address, the MCP tools.
func fuzzSeeds(tb testing.TB) []fuzzSeed {
	png := testkit.PNG(tb, 8, 8)
	multipart := "--x\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nfuzz\r\n" +
		"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n" + string(png) + "\r\n--x--\r\n"
	const sessionless = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	mcp := func(id int, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	return []fuzzSeed{
		{0, "/api/v1/account", 1, 0, "", 200},
		{0, "/api/v1/models?modality=audio&track=music", 1, 0, "", 200},
		{1, "/api/v1/generations", 1, 1, `{"modality":"image","model_id":"flux-2-pro","prompt":"a fox","count":2}`, 201},
		{1, "/api/v1/generations", 1, 1, `{"modality":"video","model_id":"veo-3-fast","prompt":"a fox","duration":8,"wait_seconds":5}`, 201},
		{1, "/api/v1/generations", 1, 1, `{"modality":"audio","model_id":"openai-tts-1","prompt":"Hello."}`, 201},
		{1, "/api/v1/generations", 2, 1, `{"modality":"audio","model_id":"openai-tts-1","prompt":"Hello."}`, 403},
		{0, "/api/v1/generations/61?wait_seconds=1", 1, 0, "", 200},
		{0, "/api/v1/generations/1000001?wait_seconds=1", 1, 0, "", 404},
		{0, "/api/v1/assets?kind=image&status=completed&limit=3&starting_after=99", 1, 0, "", 200},
		{0, "/api/v1/assets/16", 1, 0, "", 200},
		{1, "/api/v1/uploads", 1, 1, `{"image_url":"` + testkit.DataURI("image/png", png) + `","title":"x"}`, 201},
		{1, "/api/v1/uploads", 1, 2, multipart, 201},
		{0, "/api/v1/encore/effects", 1, 0, "", 200},
		{1, "/api/v1/encore/creations", 1, 1, `{"effect":"golden-hour","image_url":"https://example.com/a.jpg"}`, 201},
		{0, "/api/v1/encore/creations/1", 1, 0, "", 200},
		{0, "/api/v1/characters", 1, 0, "", 200},
		{0, "/api/v1/brand_kits?limit=1", 1, 0, "", 200},
		{0, "/api/v1/projects?starting_after=1", 1, 0, "", 200},
		{0, "/api/v1/social/accounts", 1, 0, "", 200},
		{1, "/api/v1/social/publications", 1, 1, `{"asset_ids":[16],"caption":"hi","platforms":["instagram"],"scheduled_at":"2026-02-01T00:00:00Z"}`, 201},
		{0, "/api/v1/social/publications?status=scheduled", 1, 0, "", 200},
		{0, "/api/v1/openapi.json", 0, 0, "", 200},
		{3, "/api/v1/account", 1, 0, "", 405},
		{1, "/api/v1/generations", 1, 1, `{"modality":`, 400},
		{1, "/api/v1/generations", 1, 3, `x`, 415},
		{0, "/files/a/1/1/0000000000000000.png", 0, 0, "", 404},
		{1, "/mcp", 1, 1, mcp(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}`), 200},
		// The sessionless revision: each request stands alone (fuzzRequest
		// sends its header when the body names it).
		{1, "/mcp", 1, 1, mcp(2, "tools/list", `{`+sessionless+`}`), 200},
		{1, "/mcp", 1, 1, mcp(3, "tools/call", `{"name":"create_generation","arguments":{"modality":"image","model_id":"imagen-4","prompt":"a fox"},`+sessionless+`}`), 200},
		{1, "/mcp", 1, 1, mcp(4, "resources/list", `{`+sessionless+`}`), 200},
		{1, "/mcp", 1, 1, mcp(5, "tools/list", `{}`), 400}, // a session-era request without its session
		// The control MCP server, sessionless.
		{1, "/_mock/mcp", 0, 1, mcp(6, "tools/list", `{`+sessionless+`}`), 200},
		{1, "/_mock/mcp", 0, 1, mcp(7, "tools/call", `{"name":"fail_next","arguments":{"count":1,"modality":"video"},`+sessionless+`}`), 200},
		{1, "/_mock/mcp", 0, 1, mcp(8, "resources/read", `{"uri":"mediamock-control://journal",`+sessionless+`}`), 200},
		{1, "/_mock/mcp", 0, 1, mcp(9, "prompts/get", `{"name":"rehearse_429_storm","arguments":{"count":"3"},`+sessionless+`}`), 200},
		{0, "/_mock/clock", 0, 0, "", 200},
		{1, "/_mock/clock/advance", 0, 1, `{"duration":"30s"}`, 200},
		{1, "/_mock/faults/fail-next", 0, 1, `{"count":1}`, 200},
		{0, "/_mock/journal?status=400", 0, 0, "", 200},
		{0, "/_mock/coverage", 0, 0, "", 200},
		{0, "/_mock/workspaces/1", 0, 0, "", 200},
		{0, "/_mock/workspaces/1/ledger?limit=5", 0, 0, "", 200},
		{1, "/_mock/sandboxes", 0, 1, `{"name":"fuzz"}`, 201},
		{2, "/_mock/snapshot", 0, 5, "not a snapshot", 400},
		{0, "/.well-known/oauth-protected-resource/mcp", 0, 0, "", 200},
		{0, "/.well-known/oauth-authorization-server", 0, 0, "", 200},
		{1, "/oauth/register", 0, 1, `{"redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`, 201},
		{1, "/oauth/token", 0, 0, "grant_type=authorization_code&code=x&code_verifier=y&client_id=mcl_x", 401},
		{0, "/oauth/authorize?response_type=code&client_id=mcl_x", 0, 0, "", 400},
	}
}

// fuzzRequest is the request a fuzz input stands for.
func fuzzRequest(method uint8, path string, token, ctype uint8, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(fuzzMethods[int(method)%len(fuzzMethods)], "http://127.0.0.1"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if tok := fuzzTokens[int(token)%len(fuzzTokens)]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ct := fuzzTypes[int(ctype)%len(fuzzTypes)]; ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if strings.HasPrefix(path, "/mcp") || strings.HasPrefix(path, "/_mock/mcp") {
		// The MCP transport wants both, or refuses before any tool runs.
		req.Header.Set("Accept", "application/json, text/event-stream")
		if bytes.Contains(body, []byte(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)) {
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			var msg struct {
				Method string
				Params struct{ Name, URI string }
			}
			if json.Unmarshal(body, &msg) == nil {
				req.Header.Set("Mcp-Method", msg.Method)
				if name := cmp.Or(msg.Params.Name, msg.Params.URI); name != "" {
					req.Header.Set("Mcp-Name", name)
				}
			}
		}
	}
	return req, nil
}

// TestFuzzSeedsReachTheirHandlers keeps the seed corpus honest: each seed
// gets the answer it was written for, so an API change cannot turn the
// corpus into a list of refusals unnoticed (nor the door fuzzers' refusals
// into something else).
func TestFuzzSeedsReachTheirHandlers(t *testing.T) {
	srv, err := mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockVirtual, JournalSize: 50})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	for _, s := range append(fuzzSeeds(t), refusalSeeds()...) {
		req, err := fuzzRequest(s.method, s.path, s.token, s.ctype, []byte(s.body))
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		assert.Equal(t, s.status, rec.Code, "%s %s: %.300s", req.Method, s.path, rec.Body.String())
	}
}

// FuzzHandler sends anything to the whole server: no answer may be a 5xx or
// a panic, and every error is the spec's error object. The seed corpus is
// fuzzSeeds.
func FuzzHandler(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.method, s.path, s.token, s.ctype, []byte(s.body))
	}
	srv, err := fuzzServer()
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, method uint8, path string, token, ctype uint8, body []byte) {
		if len(body) > 1<<16 || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") {
			return
		}
		if strings.HasPrefix(path, "/_mock/reset") || strings.HasPrefix(path, "/_mock/clock/set") {
			return // they move the whole world: fine, but they make the fuzzer slow
		}
		if strings.HasPrefix(path, "/_mock/journal/wait") || strings.HasPrefix(path, "/_mock/events") {
			return // they wait on the wall clock by design (up to 55 s, or a stream): the fuzzer would stall
		}
		if strings.HasPrefix(path, "/_mock/mcp") && callsAny(body, "wait_journal", "reset", "set_clock") {
			return // the same operations as tools of the control MCP server (its server caps a wait at 1 s, too)
		}
		req, err := fuzzRequest(method, path, token, ctype, body)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s -> %d: %s", req.Method, path, res.StatusCode, data)
		}
		if res.StatusCode >= 400 && req.Method != "HEAD" && !errorObject(req.URL.Path, data) {
			t.Fatalf("%s %s -> %d without the error object: %q", req.Method, path, res.StatusCode, data)
		}
	})
}

// errorObject reports whether a refusal carries the error object of the
// door that answered: the spec's everywhere, JSON-RPC's on /mcp for what
// is not JSON-RPC, OAuth's (RFC 6749) at the authorization server.
func errorObject(path string, data []byte) bool {
	var e struct {
		JSONRPC string          `json:"jsonrpc"`
		Error   json.RawMessage `json:"error"`
		Desc    string          `json:"error_description"`
	}
	if json.Unmarshal(data, &e) != nil {
		return false
	}
	var spec struct{ Code, Message string }
	if json.Unmarshal(e.Error, &spec) == nil && spec.Code != "" && spec.Message != "" {
		return true
	}
	var rpc struct {
		Code    *int64
		Message string
	}
	if (strings.HasPrefix(path, "/mcp") || strings.HasPrefix(path, "/_mock/mcp")) && e.JSONRPC == "2.0" && json.Unmarshal(e.Error, &rpc) == nil && rpc.Code != nil && rpc.Message != "" {
		return true
	}
	var code string
	return (strings.HasPrefix(path, "/oauth/") || strings.HasPrefix(path, "/.well-known/")) &&
		json.Unmarshal(e.Error, &code) == nil && code != "" && e.Desc != ""
}

// callsAny reports whether an MCP body (a message or a batch, its strings
// unescaped as the server reads them) calls one of the tools named.
func callsAny(body []byte, names ...string) bool {
	var msgs []struct {
		Params struct{ Name string }
	}
	if json.Unmarshal(body, &msgs) != nil {
		msgs = msgs[:0]
		var one struct {
			Params struct{ Name string }
		}
		if json.Unmarshal(body, &one) != nil {
			return false
		}
		msgs = append(msgs, one)
	}
	for _, m := range msgs {
		if slices.Contains(names, m.Params.Name) {
			return true
		}
	}
	return false
}
