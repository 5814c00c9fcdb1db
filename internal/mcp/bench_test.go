package mcp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The same two reads through each front, over loopback HTTP with
// keep-alive: what an MCP tool call costs next to its REST request.
//
//	go test -run '^$' -bench 'MCPToolCall|RESTSameRequest' ./internal/mcp/

var benchCalls = []struct{ name, tool, path string }{
	{"get_account", "get_account", "/account"},
	{"list_assets", "list_assets", "/assets?limit=20"},
}

// benchServer starts a server with a workspace whose rate limit does not
// get in the way, and twenty assets in its library.
func benchServer(b *testing.B) (*mediamock.Server, string) {
	b.Helper()
	srv, err := mediamock.New(mediamock.Options{DBPath: b.TempDir() + "/state.db", JournalSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	ws, err := srv.AddWorkspace(mediamock.WorkspaceSpec{Name: "bench", Plan: "business", Credits: 1 << 40, RateLimitPerMinute: 1 << 30, Token: "mk_test_bench_key"})
	if err != nil {
		b.Fatal(err)
	}
	for range 5 {
		req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations",
			strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"a bench","count":4,"wait_seconds":55}`))
		req.Header.Set("Authorization", "Bearer "+ws.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return srv, ws.Token
}

func BenchmarkMCPToolCall(b *testing.B) {
	srv, token := benchServer(b)
	for _, version := range []string{latest, sessioned} {
		name := "2026-07-28"
		if version != latest {
			name = version
		}
		mc := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := mc.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.MCPURL(),
			HTTPClient: &http.Client{Transport: testkit.Bearer{Key: token, Base: srv.Client().Transport}}}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			b.Fatal(err)
		}
		for _, bc := range benchCalls {
			b.Run(name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				params := &sdk.CallToolParams{Name: bc.tool, Arguments: map[string]any{}}
				for b.Loop() {
					res, err := cs.CallTool(context.Background(), params)
					if err != nil || res.IsError {
						b.Fatalf("%s: %v %v", bc.tool, err, res)
					}
				}
			})
		}
		cs.Close()
	}
}

// BenchmarkMCPToolCallRaw posts the same calls as raw JSON-RPC, without
// an SDK client: what the server alone spends on a tool call.
func BenchmarkMCPToolCallRaw(b *testing.B) {
	srv, token := benchServer(b)
	client := srv.Client()
	post := func(b *testing.B, header http.Header, body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(body))
		req.Header = header.Clone()
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", body, resp.StatusCode)
		}
		return resp
	}
	resp := post(b, http.Header{}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	session := http.Header{"Mcp-Session-Id": {resp.Header.Get("Mcp-Session-Id")}, "Mcp-Protocol-Version": {sessioned}}
	req, _ := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header = session.Clone()
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
	}
	for _, bc := range benchCalls {
		sessionless := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {bc.tool}}
		b.Run("2026-07-28/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + bc.tool + `","arguments":{},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			for b.Loop() {
				post(b, sessionless, body)
			}
		})
		b.Run(sessioned+"/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + bc.tool + `","arguments":{}}}`
			for b.Loop() {
				post(b, session, body)
			}
		})
	}
}

func BenchmarkRESTSameRequest(b *testing.B) {
	srv, token := benchServer(b)
	client := srv.Client()
	for _, bc := range benchCalls {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("GET", srv.BaseURL()+bc.path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", bc.path, resp.StatusCode)
				}
			}
		})
	}
}
