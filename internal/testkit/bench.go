package testkit

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchLibrary writes, in dir, the fixtures of bench/compare: a workspace
// of assets whose rate limit never bites, with the key mk_test_bench of
// the scopes given, and returns their path.
func BenchLibrary(tb testing.TB, dir string, assets int, scopes ...string) string {
	fix := dir + "/bench.json"
	err := os.WriteFile(fix, []byte(`{"extends": "default",
  "plans": {"bench": {"rate_limit_per_minute": 1000000000, "publishing_allowed": true}},
  "workspaces": [{"name": "Bench", "plan": "bench", "credits": 1000000000000,
    "api_keys": [{"token": "mk_test_bench", "scopes": ["`+strings.Join(scopes, `", "`)+`"]}], "assets": {"count": `+strconv.Itoa(assets)+`}}]}`), 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	return fix
}

// MCPListPageSessionless is bench/compare's sessionless tools/call: the
// list page (20 assets) as a tool call of the 2026-07-28 revision.
const MCPListPageSessionless = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`
