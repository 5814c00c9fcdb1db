package mcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The sessionless revision (2026-07-28) on every method the door offers,
// with raw requests: the standard headers say what the message says
// (Mcp-Method always; Mcp-Name for a call or a read, plain or in its Base64
// form), or the answer is 400 with -32020; every result names the server
// in its _meta and says it is complete; the lists and the reads carry the
// cache hints.
func TestSessionlessRevisionOnEveryMethod(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	c := connect(t, srv, mediamock.KeyFreePlan, latest)
	asset := fmt.Sprintf("mediamock://assets/%d", c.call("list_assets", map[string]any{"limit": 1, "status": "completed"}).ok().id("data.0.id"))

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	methods := []struct {
		method, name, params string
		cached               string // the cacheScope of the result, "" when it carries none
		field                string // a field of the result
	}{
		{"server/discover", "", `{` + meta + `}`, "public", "supportedVersions"},
		{"tools/list", "", `{` + meta + `}`, "public", "tools"},
		{"resources/list", "", `{` + meta + `}`, "public", "resources"},
		{"resources/templates/list", "", `{` + meta + `}`, "public", "resourceTemplates"},
		{"tools/call", "get_account", `{"name":"get_account","arguments":{},` + meta + `}`, "", "structuredContent"},
		{"resources/read", "mediamock://models", `{"uri":"mediamock://models",` + meta + `}`, "public", "contents"},
		{"resources/read", asset, `{"uri":"` + asset + `",` + meta + `}`, "private", "contents"},
	}
	post := func(method, name, params string, header map[string]string) (*http.Response, map[string]any) {
		t.Helper()
		h := auth(mediamock.KeyFreePlan)
		h.Set("Mcp-Protocol-Version", "2026-07-28")
		h.Set("Mcp-Method", method)
		if name != "" {
			h.Set("Mcp-Name", name)
		}
		for k, v := range header {
			if v == "" {
				h.Del(k)
			} else {
				h.Set(k, v)
			}
		}
		resp, body := rpc(t, srv, h, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`)
		var msg map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &msg), body)
		return resp, msg
	}
	for _, m := range methods {
		t.Run(m.method+" "+m.name, func(t *testing.T) {
			resp, msg := post(m.method, m.name, m.params, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%v", msg)
			require.Contains(t, msg, "result", "%v", msg)
			res := msg["result"].(map[string]any)
			assert.Equal(t, "complete", res["resultType"])
			assert.Equal(t, "mediamock", res["_meta"].(map[string]any)[sdk.MetaKeyServerInfo].(map[string]any)["name"])
			assert.Contains(t, res, m.field)
			if m.cached != "" {
				assert.Equal(t, m.cached, res["cacheScope"])
				assert.Equal(t, float64(0), res["ttlMs"])
			}

			refused := func(why string, header map[string]string) {
				t.Helper()
				resp, msg := post(m.method, m.name, m.params, header)
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %v", why, msg)
				require.Contains(t, msg, "error", why)
				assert.Equal(t, float64(sdk.CodeHeaderMismatch), msg["error"].(map[string]any)["code"], "%s: %v", why, msg)
				assert.Equal(t, float64(7), msg["id"], why)
			}
			refused("no Mcp-Method", map[string]string{"Mcp-Method": ""})
			refused("another Mcp-Method", map[string]string{"Mcp-Method": "ping"})
			if m.name == "" {
				return
			}
			refused("no Mcp-Name", map[string]string{"Mcp-Name": ""})
			refused("another Mcp-Name", map[string]string{"Mcp-Name": m.name + "x"})
			refused("Mcp-Name not Base64", map[string]string{"Mcp-Name": "=?base64?not base64?="})
			refused("another Mcp-Name, in Base64", map[string]string{"Mcp-Name": "=?base64?" + base64.StdEncoding.EncodeToString([]byte(m.name+"x")) + "?="})
			resp, msg = post(m.method, m.name, m.params, map[string]string{"Mcp-Name": "=?base64?" + base64.StdEncoding.EncodeToString([]byte(m.name)) + "?="})
			assert.Equal(t, http.StatusOK, resp.StatusCode, "the Base64 form is decoded: %v", msg)
			assert.Contains(t, msg, "result", "the Base64 form is decoded")
		})
	}
}

// TestUnknownProtocolVersion: a revision the server does not speak gets
// -32022 with the versions it does, whatever the date sorts as, with or
// without a session.
func TestUnknownProtocolVersion(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, version := range []string{"1900-01-01", "2025-01-01", "2026-07-29", "2099-01-01", "latest"} {
		h := auth(mediamock.KeyFreePlan)
		h.Set("Mcp-Protocol-Version", version)
		h.Set("Mcp-Method", "tools/list")
		resp, body := rpc(t, srv, h, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+version+`","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, version)
		var msg struct {
			ID    int `json:"id"`
			Error struct {
				Code int                                `json:"code"`
				Data sdk.UnsupportedProtocolVersionData `json:"data"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &msg), body)
		assert.Equal(t, sdk.CodeUnsupportedProtocolVersion, msg.Error.Code, "%s: %s", version, body)
		assert.Equal(t, 3, msg.ID)
		assert.Equal(t, version, msg.Error.Data.Requested)
		assert.Equal(t, sdk.SupportedProtocolVersions(), msg.Error.Data.Supported)
	}

	// An initialize that sends the header with a version it does not
	// speak is refused the same way (the body's protocolVersion is what
	// negotiates).
	h := auth(mediamock.KeyFreePlan)
	h.Set("Mcp-Protocol-Version", "1900-01-01")
	resp, body := rpc(t, srv, h, initialize)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, `"code":-32022`)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
}

// TestSessionlessRevisionOverStdio: over stdio (no headers) the revision
// is in each request's _meta: a read's result says it is complete, as the
// lists' do, and a revision the server does not speak gets -32022 with the
// request's id; the lines after it are answered.
func TestSessionlessRevisionOverStdio(t *testing.T) {
	srv := mediamock.RunT(t)
	meta := func(v string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"mediamock://models",` + meta("2026-07-28") + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta("1900-01-01") + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta("2026-07-28") + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"mediamock://nothing",` + meta("2026-07-28") + `}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	require.NoError(t, srv.ServeMCP(context.Background(), strings.NewReader(in), &out, mediamock.KeyAllScopes))
	answers := map[int]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &msg), line)
		answers[int(msg["id"].(float64))] = msg
	}
	require.Len(t, answers, 4, out.String())
	for _, id := range []int{1, 3} {
		res := answers[id]["result"].(map[string]any)
		assert.Equal(t, "complete", res["resultType"], "answer %d", id)
		assert.Contains(t, res["_meta"], sdk.MetaKeyServerInfo, "answer %d", id)
		assert.Equal(t, "public", res["cacheScope"], "answer %d", id)
	}
	refused := answers[2]["error"].(map[string]any)
	assert.Equal(t, float64(sdk.CodeUnsupportedProtocolVersion), refused["code"])
	assert.Equal(t, "1900-01-01", refused["data"].(map[string]any)["requested"])
	assert.Equal(t, float64(-32602), answers[4]["error"].(map[string]any)["code"], "an error stays an error")
}

// TestMCPMaxWaitCapsLongWaits: with a cap, a tool call's wait_seconds is
// cut to it, and the call answers with the job still running (on the
// virtual clock the wait moves time by the cap, not by 55 s); REST keeps
// the API's 55.
func TestMCPMaxWaitCapsLongWaits(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.MCPMaxWait = 10 })
	c := connect(t, srv, mediamock.KeyAllScopes, latest)
	before := srv.Now()
	res := c.call("create_generation", map[string]any{"modality": "image", "model_id": "imagen-4",
		"prompt": "a slow lighthouse [mock:delay=300]", "wait_seconds": 55}).ok()
	assert.NotEqual(t, "completed", res.JSON["status"], "answered before the job ended")
	assert.Equal(t, 10*time.Second, srv.Now().Sub(before), "the wait was cut to the cap")
	id := res.id("assets.0.id")
	before = srv.Now()
	testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", fmt.Sprintf("/generations/%d?wait_seconds=55", id), nil)
	assert.Equal(t, 55*time.Second, srv.Now().Sub(before), "REST is not capped")
}
