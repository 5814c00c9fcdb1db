package mcpserver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// discard is a ResponseWriter that keeps nothing: what the framing costs,
// without a recorder's copies.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkToolCall is the framing's share of a tool call: a call of a
// tool that answers a page of about 9 KB, read, served and written, in a
// session and sessionless (go test -run '^$' -bench ToolCall
// ./internal/mcpserver/).
func BenchmarkToolCall(b *testing.B) {
	page := []byte(`{"object":"list","data":[` + strings.Repeat(`{"id":1,"object":"asset","kind":"image","status":"completed","url":"http://127.0.0.1/files/a/1/1/be1bc5fd526f2104.jpg","width":1024},`, 60) + `{"id":2}],"has_more":true}`)
	s := New(Options{NewSessionID: func() string { return "bench" }, EventBytes: 1 << 20, DirectCalls: true, ProgressStreams: true, DirectReads: true,
		Capabilities: Capabilities{Tools: true}})
	s.AddTool(Tool{Name: "list_assets", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, c *ToolCall) *ToolResult {
		return &ToolResult{Content: []Content{Text("List library assets (200): 20 item(s). The full result is the structured content.")}, StructuredContent: page}
	})
	serve := func(h http.Header, body string) http.Header {
		w := &discard{h: http.Header{}}
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header = h
		s.ServeHTTP(w, r)
		return w.h
	}
	base := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	init := serve(base.Clone(), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	session := base.Clone()
	session.Set("Mcp-Session-Id", init.Get("Mcp-Session-Id"))
	session.Set("Mcp-Protocol-Version", "2025-11-25")
	sessionless := base.Clone()
	sessionless.Set("Mcp-Protocol-Version", Sessionless)
	sessionless.Set("Mcp-Method", "tools/call")
	sessionless.Set("Mcp-Name", "list_assets")
	for _, c := range []struct {
		name   string
		header http.Header
		body   string
	}{
		{"sessionless", sessionless, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"session", session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			body := []byte(c.body)
			for b.Loop() {
				w := &discard{h: http.Header{}}
				r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
				r.Header = c.header
				s.ServeHTTP(w, r)
			}
		})
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
		for b.Loop() {
			decodeBody(body, overHTTP)
		}
	})
}
