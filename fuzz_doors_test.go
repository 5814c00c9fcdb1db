package mediamock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/problem"
)

// The most an answer that refuses a request may be, on every door
// (docs/reference/endpoints.md, "Answer sizes"): a fixed part, and a
// part that grows with the request, since an error names what the request
// sent. It lists at most problem.MaxViolations violations; each names a
// field of the request in the message and in the details, escaped (a <
// is six bytes), and a control MCP tool error carries its error object
// twice, as text (escaped again) and as structured content.
const (
	refusalBase    = 64 << 10
	refusalPerByte = 32
)

// refusalBound is the most an answer refusing a request of n bytes (its
// target, headers and body) may be.
func refusalBound(n int) int { return refusalBase + refusalPerByte*n }

// requestBytes is the size of a request as refusalBound counts it.
func requestBytes(req *http.Request, body []byte) int {
	n := len(req.Method) + len(req.URL.RequestURI()) + len(body)
	for k, vs := range req.Header {
		for _, v := range vs {
			n += len(k) + len(v)
		}
	}
	return n
}

// A door is what a fuzz target sends its requests to: the paths it
// serves (the first is where an input outside them is sent), and a
// server of its own, so that what one door's fuzzing does (a fault rule,
// a sandbox) never reaches another's.
type door struct {
	name     string
	prefixes []string
	server   func() (*mediamock.Server, error)
}

func newDoor(name string, prefixes ...string) *door {
	return &door{name: name, prefixes: prefixes, server: sync.OnceValues(func() (*mediamock.Server, error) {
		return mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockVirtual, JournalSize: 50, MCPMaxWait: 1})
	})}
}

var (
	restDoor       = newDoor("REST", "/api/v1/", "/files/")
	mcpDoor        = newDoor("MCP", "/mcp")
	controlDoor    = newDoor("control API", "/_mock/")
	controlMCPDoor = newDoor("control MCP", "/_mock/mcp")
	oauthDoor      = newDoor("OAuth", "/oauth/", "/.well-known/")
)

// path puts a fuzzed path into the door: one outside it is sent under its
// first prefix.
func (d *door) path(p string) string {
	for _, prefix := range d.prefixes {
		if strings.HasPrefix(p, prefix) {
			return p
		}
	}
	return strings.TrimSuffix(d.prefixes[0], "/") + "/" + strings.TrimPrefix(p, "/")
}

// serves reports whether a seed's path is the door's.
func (d *door) serves(p string) bool {
	return d.path(p) == p && (d != controlDoor || !strings.HasPrefix(p, "/_mock/mcp"))
}

// longKeys is a JSON object of n keys of size bytes each, all <, so that
// each is escaped to six times its size: the most an error can grow with
// its request.
func longKeys(n, size int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"%s%02d":1,`, strings.Repeat("<", size), i)
	}
	b.WriteString(`"z":1}`)
	return b.String()
}

// refusalSeeds are requests each door refuses with an error that names
// what they sent, as large as an error gets.
func refusalSeeds() []fuzzSeed {
	const sessionless = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	keys := longKeys(problem.MaxViolations+2, 2000)
	call := func(name string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + keys + `,` + sessionless + `}}`
	}
	return []fuzzSeed{
		{1, "/api/v1/generations", 1, 1, keys, 400},
		{0, "/api/v1/assets?kind=" + strings.Repeat("<", 2000), 1, 0, "", 400},
		{1, "/mcp", 1, 1, call("create_generation"), 200},
		{1, "/_mock/faults/fail-next", 0, 1, keys, 400},
		{1, "/_mock/sandboxes", 0, 1, `{"keys":[` + strings.Repeat(`{"<<<<<<<<":1},`, 200) + `1]}`, 400},
		{1, "/_mock/mcp", 0, 1, call("fail_next"), 200},
		{1, "/oauth/register", 0, 1, keys, 400},
	}
}

// fuzzDoor fuzzes a door over HTTP: any method, path under the door,
// credential, Content-Type and body. No answer may be a 5xx, a refusal
// carries the door's error object, and no refusal (an HTTP error, or a
// JSON-RPC error or a tool error inside a 200) is larger than
// refusalBound of its request.
func fuzzDoor(f *testing.F, d *door) {
	for _, s := range append(fuzzSeeds(f), refusalSeeds()...) {
		if d.serves(s.path) {
			f.Add(s.method, s.path, s.token, s.ctype, []byte(s.body))
		}
	}
	srv, err := d.server()
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, method uint8, path string, token, ctype uint8, body []byte) {
		path = d.path(path)
		if len(body) > 1<<16 || strings.ContainsAny(path, " \r\n\t#") || slowPath(path, body) {
			return
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
			t.Fatalf("%s: %s %s -> %d: %.2000s", d.name, req.Method, path, res.StatusCode, data)
		}
		if res.StatusCode >= 400 && req.Method != "HEAD" && !errorObject(req.URL.Path, data) {
			t.Fatalf("%s: %s %s -> %d without the error object: %.2000q", d.name, req.Method, path, res.StatusCode, data)
		}
		n := requestBytes(req, body)
		if res.StatusCode >= 400 && len(data) > refusalBound(n) {
			t.Fatalf("%s: %s %s -> %d of %d bytes, over the bound %d for a request of %d bytes", d.name, req.Method, path, res.StatusCode, len(data), refusalBound(n), n)
		}
		if res.StatusCode < 300 && (strings.HasPrefix(path, "/mcp") || strings.HasPrefix(path, "/_mock/mcp")) {
			checkMessages(t, d.name, mcpMessages(res.Header.Get("Content-Type"), data), n)
		}
	})
}

// slowPath reports what the door fuzzers leave out, as FuzzHandler does:
// what moves the whole world (slow, not wrong), and what waits on the
// wall clock by design.
func slowPath(path string, body []byte) bool {
	switch {
	case strings.HasPrefix(path, "/_mock/reset"), strings.HasPrefix(path, "/_mock/clock/set"),
		strings.HasPrefix(path, "/_mock/journal/wait"), strings.HasPrefix(path, "/_mock/events"):
		return true
	}
	return strings.HasPrefix(path, "/_mock/mcp") && callsAny(body, "wait_journal", "reset", "set_clock")
}

// mcpMessages are the JSON-RPC messages of an MCP answer: a JSON body (a
// message, or a batch's), or the data of each event.
func mcpMessages(contentType string, data []byte) []json.RawMessage {
	var out []json.RawMessage
	add := func(v []byte) {
		v = bytes.TrimSpace(v)
		if len(v) > 0 && v[0] == '[' {
			var batch []json.RawMessage
			if json.Unmarshal(v, &batch) == nil {
				out = append(out, batch...)
				return
			}
		}
		if len(v) > 0 {
			out = append(out, v)
		}
	}
	if strings.HasPrefix(contentType, "text/event-stream") {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				add(d)
			}
		}
		return out
	}
	add(data)
	return out
}

// checkMessages holds MCP answers to the doors' rules: each is JSON, none
// is a server error (JSON-RPC's internal error, or a tool error carrying
// internal_error), and a refusal (a JSON-RPC error, a tool error) is at
// most refusalBound of the request.
func checkMessages(t *testing.T, name string, msgs []json.RawMessage, n int) {
	t.Helper()
	for _, m := range msgs {
		var msg struct {
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
			Result *struct {
				IsError           bool `json:"isError"`
				StructuredContent *struct {
					Error *struct {
						Code string `json:"code"`
					} `json:"error"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			t.Fatalf("%s: an answer that is not a JSON-RPC message (%v): %.2000q", name, err, m)
		}
		refusal := msg.Error != nil || msg.Result != nil && msg.Result.IsError
		if msg.Error != nil && msg.Error.Code == -32603 {
			t.Fatalf("%s: an internal error: %.2000s", name, m)
		}
		if r := msg.Result; r != nil && r.IsError && r.StructuredContent != nil && r.StructuredContent.Error != nil && r.StructuredContent.Error.Code == "internal_error" {
			t.Fatalf("%s: a tool's internal error: %.2000s", name, m)
		}
		if refusal && len(m) > refusalBound(n) {
			t.Fatalf("%s: a refusal of %d bytes, over the bound %d for a request of %d bytes: %.300s", name, len(m), refusalBound(n), n, m)
		}
	}
}

// FuzzREST fuzzes the service's REST API (and its file addresses).
func FuzzREST(f *testing.F) { fuzzDoor(f, restDoor) }

// FuzzMCPHTTP fuzzes the service's MCP server over Streamable HTTP.
func FuzzMCPHTTP(f *testing.F) { fuzzDoor(f, mcpDoor) }

// FuzzControlAPI fuzzes the control API (/_mock, the control MCP server
// aside).
func FuzzControlAPI(f *testing.F) { fuzzDoor(f, controlDoor) }

// FuzzControlMCP fuzzes the control MCP server over Streamable HTTP.
func FuzzControlMCP(f *testing.F) { fuzzDoor(f, controlMCPDoor) }

// FuzzOAuth fuzzes the authorization server and its metadata.
func FuzzOAuth(f *testing.F) { fuzzDoor(f, oauthDoor) }

// stdioSeeds are stdio sessions: the handshake then calls, the
// sessionless revision, and lines that are refused.
func stdioSeeds() []string {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	return []string{
		initialize + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_account","arguments":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create_generation","arguments":{"modality":"image","model_id":"imagen-4","prompt":"a fox"}}}`,
		initialize + `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"mediamock://models"}}` + "\n" +
			`[{"jsonrpc":"2.0","id":3,"method":"ping"}]` + "\nnot json\n" + `{"jsonrpc":"2.0","id":4,"method":"no/such"}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":2},` + meta + `}}`,
		initialize + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_generation","arguments":` + longKeys(problem.MaxViolations+2, 2000) + `}}`,
	}
}

// FuzzMCPStdio fuzzes the service's MCP server over stdio, in process:
// the session ends with its input, every line it writes is JSON-RPC, none
// is a server error, and no refusal is larger than refusalBound of the
// input.
func FuzzMCPStdio(f *testing.F) {
	for _, s := range stdioSeeds() {
		f.Add([]byte(s))
	}
	srv, err := mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockVirtual, JournalSize: 50, MCPMaxWait: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		var out bytes.Buffer
		if err := srv.ServeMCP(context.Background(), bytes.NewReader(data), &out, mediamock.KeyAllScopes); err != nil {
			t.Fatalf("%.2000q: %v", data, err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) > 0 {
				checkMessages(t, "MCP stdio", mcpMessages("application/json", line), len(data))
			}
		}
	})
}
