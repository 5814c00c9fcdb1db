package mcp_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestMCPListPageWire holds the answers to the list page as a tool call,
// sessionless and in a session, byte for byte what they were (the golden
// file, of a fixed seed and a manual clock): making the call cheaper does
// not change the wire.
func TestMCPListPageWire(t *testing.T) {
	dir := t.TempDir()
	fix := testkit.BenchLibrary(t, dir, 60, "read")
	srv, err := mediamock.New(mediamock.Options{DBPath: dir + "/state.db", FixturesPath: fix, Clock: mediamock.ClockManual, NoListener: true})
	require.NoError(t, err)
	defer srv.Close()
	h := srv.Handler()
	var out bytes.Buffer
	serve := func(name string, header http.Header, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header = header.Clone()
		req.Header.Set("Authorization", "Bearer mk_test_bench")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if name != "" {
			fmt.Fprintf(&out, "== %s\n%d\n", name, w.Code)
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range w.Header() {
					if !yield(k) {
						return
					}
				}
			}) {
				if k == "X-Request-Id" || k == "Mcp-Session-Id" {
					continue // differ from run to run
				}
				fmt.Fprintf(&out, "%s: %s\n", k, strings.Join(w.Header()[k], ", "))
			}
			fmt.Fprintf(&out, "\n%s\n", w.Body)
		}
		return w
	}
	accept := "application/json, text/event-stream"
	init := serve("", http.Header{"Accept": {accept}}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	session := http.Header{"Accept": {accept}, "Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {init.Header().Get("Mcp-Session-Id")}}
	serve("", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sessionless := http.Header{"Accept": {accept}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"list_assets"}}
	serve("sessionless", sessionless, testkit.MCPListPageSessionless)
	serve("session", session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`)
	serve("session, next page", session, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"list_assets","arguments":{"limit":5,"starting_after":101}}}`)
	serve("session, the last page", session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":5,"starting_after":63}}}`)
	serve("session, an empty page", session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_assets","arguments":{"starting_after":1}}}`)
	serve("sessionless, videos", sessionless, strings.Replace(testkit.MCPListPageSessionless, `{"limit":20}`, `{"limit":3,"kind":"video"}`, 1))
	serve("sessionless, an error", sessionless, strings.Replace(testkit.MCPListPageSessionless, `{"limit":20}`, `{"limit":"many","x":1}`, 1))
	const golden = "testdata/list_page.golden"
	if *updateWire {
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())
}
