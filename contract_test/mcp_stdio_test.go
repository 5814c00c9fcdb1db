package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestMCPOverStdio runs the mockserver binary as an agent does: as a
// subprocess speaking MCP on its stdin and stdout, with a simulation of its
// own, then as a bridge to a running server whose simulation a test shares.
func TestMCPOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the mockserver binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "mockserver")
	build := exec.Command(gobin, "build", "-o", bin, "github.com/mediamock/mediamock/cmd/mockserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	t.Run("own simulation", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "state.db")
		cs, stderr := startStdio(t, bin, "mcp", "--db", db, "--api-key", keyAll, "--clock", "virtual", "--seed", "3")
		ctx := context.Background()
		tools, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		api, err := clientContract()
		require.NoError(t, err)
		want := 0
		for _, op := range api.Operations() {
			if op.Tool != "" {
				want++
			}
		}
		assert.Len(t, tools.Tools, want, "one tool per operation that names one")

		gen := callTool(t, cs, "create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "stdio", "wait_seconds": 55})
		require.False(t, gen.IsError, "%v", gen.StructuredContent)
		var body struct {
			Status string
			Assets []struct {
				ID  int64
				URL string
			}
		}
		decodeContent(t, gen, &body)
		assert.Equal(t, "completed", body.Status)
		file, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mediamock://assets/" + jsonNum(body.Assets[0].ID)})
		require.NoError(t, err)
		assert.Equal(t, "image/png", file.Contents[0].MIMEType)
		// The file addresses point at the simulation's own listener.
		resp, err := http.Get(body.Assets[0].URL)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)

		denied := callTool(t, cs, "get_publication", map[string]any{"id": 999999})
		assert.True(t, denied.IsError)

		// The journal of the simulation (its control API) records the calls.
		root := strings.TrimSuffix(readyURL.FindStringSubmatch(stderr.String())[1], mediamock.BasePath)
		resp, err = http.Get(root + "/_mock/journal?front=mcp")
		require.NoError(t, err)
		var journal struct {
			Entries []mediamock.JournalEntry `json:"entries"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&journal))
		resp.Body.Close()
		require.Len(t, journal.Entries, 2)
		assert.Equal(t, "getPublication", journal.Entries[0].Operation)
		assert.Equal(t, http.StatusNotFound, journal.Entries[0].Status)
		assert.Equal(t, "createGeneration", journal.Entries[1].Operation)
		assert.Equal(t, "tools/call", journal.Entries[1].MCPMethod)
		assert.Equal(t, http.StatusCreated, journal.Entries[1].Status)

		require.NoError(t, cs.Close())
		assert.Contains(t, stderr.String(), `msg="mediamock ready" mcp=stdio`)
		_, err = os.Stat(db)
		assert.NoError(t, err, "the state lives in --db")
	})

	t.Run("a script piped in", func(t *testing.T) {
		checkScriptAnswers(t, runScript(t, bin, "mcp", "--api-key", keyAll, "--clock", "virtual"))
	})

	t.Run("a script piped into the bridge", func(t *testing.T) {
		e := start(t)
		checkScriptAnswers(t, runScript(t, bin, "mcp", "--url", e.root, "--api-key", keyAll))
	})

	t.Run("bridged to a running server", func(t *testing.T) {
		e := start(t)
		cs, stderr := startStdio(t, bin, "mcp", "--url", e.root, "--api-key", keyAll)
		gen := callTool(t, cs, "create_generation", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "one simulation for two"})
		require.False(t, gen.IsError, "%v", gen.StructuredContent)
		// The test sees what the agent made: one simulation.
		var list struct{ Data []struct{ Prompt string } }
		e.get(keyAll, "/assets?query=two").expect(http.StatusOK).Decode(&list)
		require.Len(t, list.Data, 1)
		entries := e.srv.Journal(mediamock.JournalFilter{Front: "mcp", Operation: "createGeneration"})
		require.Len(t, entries, 1)
		assert.Equal(t, http.StatusCreated, entries[0].Status)
		require.NoError(t, cs.Close())
		assert.Contains(t, stderr.String(), "mediamock bridge ready")
	})

	// The control MCP server over stdio: an agent steers the simulation
	// (its own, or a running server's through the bridge) while the
	// client under test talks to the service's /mcp.
	service := func(t *testing.T) func(key, mcpURL string) *sdk.ClientSession {
		return func(key, mcpURL string) *sdk.ClientSession {
			transport := &sdk.StreamableClientTransport{Endpoint: mcpURL, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: testkit.Bearer{Key: key, Base: http.DefaultTransport}}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "client-under-test", Version: "1"}, nil).Connect(ctx, transport, nil)
			require.NoError(t, err)
			t.Cleanup(func() { cs.Close() })
			return cs
		}
	}
	t.Run("control, own simulation", func(t *testing.T) {
		cs, stderr := startStdio(t, bin, "mcp", "--control", "--clock", "virtual", "--seed", "3")
		testkit.Rehearse(t, cs, service(t))
		require.NoError(t, cs.Close())
		assert.Contains(t, stderr.String(), `msg="mediamock ready" mcp=stdio server=control`)
	})
	t.Run("control, bridged to a running server", func(t *testing.T) {
		e := start(t)
		cs, stderr := startStdio(t, bin, "mcp", "--control", "--url", e.root)
		testkit.Rehearse(t, cs, service(t))
		require.NoError(t, cs.Close())
		assert.Contains(t, stderr.String(), "mediamock bridge ready")
		var list struct {
			Data []any `json:"data"`
		}
		e.call(req{method: "GET", path: "/_mock/sandboxes"}).expect(http.StatusOK).Decode(&list)
		assert.Empty(t, list.Data, "the agent deleted its sandbox on the test's server")
	})
}

// TestMCPStdioBatchLines runs the binary over stdio in its four modes (its
// own simulation and a bridge to a running server, the service's MCP
// server and the control one), in each revision that refuses batches: a
// batch line gets -32600 with a null id, the session goes on, every
// request is answered, and the process exits 0 at the end of its input
// (issue 54, item 3: it used to end the session, exit 1 and lose
// answers).
func TestMCPStdioBatchLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the mockserver binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "mockserver")
	build := exec.Command(gobin, "build", "-o", bin, "github.com/mediamock/mediamock/cmd/mockserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	e := start(t)
	modes := []struct {
		name string
		args []string
		tool string
	}{
		{"own simulation", []string{"mcp", "--api-key", keyAll, "--clock", "virtual"}, "get_account"},
		{"control", []string{"mcp", "--control", "--clock", "virtual"}, "get_clock"},
		{"bridge", []string{"mcp", "--url", e.root, "--api-key", keyAll}, "get_account"},
		{"control bridge", []string{"mcp", "--control", "--url", e.root}, "get_clock"},
	}
	for _, mode := range modes {
		for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(mode.name+" "+version, func(t *testing.T) {
				meta := ""
				var lines []string
				if version < "2026" {
					lines = append(lines, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`,
						`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				} else {
					meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
					lines = append(lines, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta[1:]+`}}`)
				}
				call := func(id int) string {
					return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s}}`, id, mode.tool, meta)
				}
				lines = append(lines, call(2), "["+call(3)+","+call(4)+"]", call(5), "["+call(6)+"]", call(7))
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, mode.args...)
				cmd.Env = cleanEnv()
				cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
				stderr := &testkit.SyncBuffer{}
				cmd.Stderr = stderr
				out, err := cmd.Output()
				require.NoError(t, err, "exits 0 at the end of its input; log:\n%s", stderr)
				answered, refused := map[string]bool{}, 0
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					var msg struct {
						ID    json.RawMessage
						Error *struct {
							Code    int
							Message string
						}
					}
					require.NoError(t, json.Unmarshal([]byte(line), &msg), "%.300s", line)
					if string(msg.ID) == "null" {
						require.NotNil(t, msg.Error, line)
						assert.Equal(t, -32600, msg.Error.Code, line)
						assert.Contains(t, msg.Error.Message, "batching is not supported", line)
						refused++
						continue
					}
					answered[string(msg.ID)] = true
				}
				assert.Equal(t, 2, refused, "each batch line is refused: %s", out)
				for _, id := range []string{"1", "2", "5", "7"} {
					assert.True(t, answered[id], "request %s is answered: %s", id, out)
				}
			})
		}
	}
}

// stdioScript is what a test pipes into `mockserver mcp`: the handshake,
// lines that are no message (each answered with a null-id error, the
// session going on), and requests, each answered before the process exits
// at the end of its input.
func stdioScript() (script string, requests []int, parseErrors, invalid int) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`not json`, // parse error
		`{"jsonrpc":"2.0","id":2,"method":"ping"} trailing`,     // parse error
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), // parse error: nests too deep
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,        // invalid: an object id
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,          // invalid: a number out of range
		`{"jsonrpc":"2.0","id":3}`,                              // invalid: neither request nor response
		`"` + strings.Repeat("x", 20<<20) + `"`,                 // invalid: over the line cap
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"seven","method":"resources/read","params":{"uri":"mediamock://models"}}`,
	}
	return strings.Join(lines, "\n") + "\n", []int{1, 4, 5, 6, 7}, 3, 4
}

// checkScriptAnswers reads the answers to stdioScript: one per request,
// and the errors of the bad lines with null ids.
func checkScriptAnswers(t *testing.T, out []byte) {
	t.Helper()
	_, requests, parseErrors, invalid := stdioScript()
	answered := map[string]json.RawMessage{}
	codes := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var msg struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		require.NoError(t, json.Unmarshal([]byte(line), &msg), "%.200s", line)
		if string(msg.ID) == "null" {
			require.NotNil(t, msg.Error, "%.200s", line)
			codes[msg.Error.Code]++
			continue
		}
		answered[string(msg.ID)] = []byte(line)
	}
	assert.Equal(t, parseErrors, codes[-32700], "parse errors")
	assert.Equal(t, invalid, codes[-32600], "invalid requests")
	assert.Len(t, answered, len(requests), "one answer per request: %v", answered)
	for _, id := range requests {
		key := strconv.Itoa(id)
		if id == 7 {
			key = `"seven"`
		}
		assert.Contains(t, answered, key)
	}
	assert.Contains(t, string(answered["5"]), `"code":-32601`)
	assert.Contains(t, string(answered["4"]), `"tools":[`)
	assert.NotContains(t, string(answered["4"]), "ttlMs", "2025-06-18 defines no cache fields")
	assert.Contains(t, string(answered["6"]), "Acme Studio")
	assert.Contains(t, string(answered[`"seven"`]), `"contents"`)
}

// runScript runs the binary with the script as its input, closed at once.
func runScript(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	script, _, _, _ := stdioScript()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader(script)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the process ends well at the end of its input; log:\n%s", stderr)
	return out
}

var readyURL = regexp.MustCompile(`msg="mediamock ready" mcp=stdio url=(\S+)`)

// cleanEnv is the environment without the server's settings.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MOCKSERVER_") {
			env = append(env, kv)
		}
	}
	return env
}

// startStdio starts the binary with a clean environment and connects an MCP
// client to its stdin and stdout; its log (stderr) is returned.
func startStdio(t *testing.T, bin string, args ...string) (*sdk.ClientSession, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "contract-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "log:\n%s", stderr)
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("mockserver log:\n%s", stderr)
		}
	})
	return cs, stderr
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func decodeContent(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v))
}

func jsonNum(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
