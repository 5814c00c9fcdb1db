package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// messageSeeds are messages of every shape clients send, and what a
// reader must refuse.
var messageSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compare","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"create_generation","arguments":{"prompt":"a \"quoted\" lighthouse","count":2,"prompt":"twice"},"_meta":{"progressToken":7}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"mediamock://assets/7"}}`,
	`{"jsonrpc":"2.0","id":3,"result":{}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":3,"result":null}`,
	` {"jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "arguments" : { } } } `,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}},"params":{}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"caf` + "\xc3\xa9" + `"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":2,"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/clientInfo":null}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"\u0061":1}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`,
	`{"jsonrpc":"2.0","id":1,"method":"x"}` + "\f",
	`{"jsonrpc":"2.0","id":1,"method":"x"`,
	`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"who":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`[]`,
	`[1]`,
	``,
	`null`,
	`"x"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// FuzzMessage holds the reader of messages to JSON: what is not one JSON
// value (as encoding/json judges it) is a parse error, and nothing else
// is; a message read has the method and the id encoding/json reads.
func FuzzMessage(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, how := range []reading{overHTTP, overStdio} {
			b, err := decodeBody(data, how)
			if parse := err != nil && err.Code == CodeParseError; parse == json.Valid(data) {
				t.Fatalf("%q: parse error %v, but encoding/json says valid %v", data, err, json.Valid(data))
			}
			if err != nil {
				if err.Code != CodeParseError && err.Code != CodeInvalidRequest {
					t.Fatalf("%q: %v", data, err)
				}
				continue
			}
			var want []struct {
				ID     any    `json:"id"`
				Method string `json:"method"`
			}
			trimmed := bytes.TrimSpace(data)
			if !b.batch {
				trimmed = append(append([]byte("["), trimmed...), ']')
			}
			if json.Unmarshal(trimmed, &want) != nil {
				continue // another type than the envelope's: the reader says more
			}
			if len(want) != len(b.msgs) {
				t.Fatalf("%q: %d messages, encoding/json reads %d", data, len(b.msgs), len(want))
			}
			for i, m := range b.msgs {
				if m.request && m.Method != want[i].Method && utf8.ValidString(want[i].Method) {
					t.Fatalf("%q: method %q, encoding/json reads %q", data, m.Method, want[i].Method)
				}
				if s, ok := want[i].ID.(string); ok && utf8.ValidString(s) {
					var got string
					if json.Unmarshal([]byte(m.ID.String()), &got) != nil || got != s {
						t.Fatalf("%q: id %s, encoding/json reads %q", data, m.ID, s)
					}
				}
			}
		}
	})
}

// fuzzServer is a server with a tool, a resource, a streamed template and
// a prompt, for the fuzz targets.
func fuzzServer() *Server {
	s := New(Options{NewSessionID: func() string { return "fuzz" }, EventBytes: 1 << 16, DirectCalls: true, ProgressStreams: true, DirectReads: true,
		Capabilities: Capabilities{Tools: true, Resources: true, Prompts: true, Logging: true},
		Limits:       Limits{Sessions: 4}})
	s.AddTool(Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, c *ToolCall) *ToolResult {
		if c.Progress != nil {
			c.Progress(1, 2, "half")
		}
		c.DropStream()
		var v any
		if json.Unmarshal(c.Arguments, &v) != nil {
			return &ToolResult{Content: []Content{Text("not JSON")}, IsError: true}
		}
		out, _ := json.Marshal(v)
		if out[0] != '{' {
			out = nil
		}
		return &ToolResult{Content: []Content{Text(string(c.Arguments))}, StructuredContent: out}
	})
	s.AddResource(Resource{URI: "toy://hello", Name: "hello"}, func(ctx context.Context, uri string) (*ReadResult, error) {
		return &ReadResult{Contents: []ResourceContents{{Text: "hello"}}}, nil
	})
	s.AddResourceTemplate(ResourceTemplate{URITemplate: "toy://files/{name}", Name: "file"}, func(ctx context.Context, uri string) (*ReadResult, error) {
		data := []byte(uri)
		return &ReadResult{Contents: []ResourceContents{{BlobReader: bytes.NewReader(data), BlobSize: int64(len(data))}}}, nil
	}, Streamed)
	s.AddPrompt(Prompt{Name: "greet"}, func(ctx context.Context, args map[string]string) (*PromptResult, error) {
		return &PromptResult{Messages: []PromptMessage{{Role: "user", Content: Text(args["who"])}}}, nil
	})
	return s
}

// FuzzHTTP holds a POST of any body, in each revision and with a session
// or without, to an answer that is not a server error, whose JSON (a JSON
// body, or each event's data) is JSON.
func FuzzHTTP(f *testing.F) {
	for _, s := range messageSeeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, data []byte, rev uint8) {
		s := fuzzServer()
		version := Versions[int(rev)%len(Versions)]
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {version}}
		if version != Sessionless {
			init := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
			r.Header = h.Clone()
			r.Header.Del("Mcp-Protocol-Version")
			s.ServeHTTP(init, r)
			h.Set("Mcp-Session-Id", init.Header().Get("Mcp-Session-Id"))
		} else {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
					URI  string `json:"uri"`
				} `json:"params"`
			}
			json.Unmarshal(data, &m)
			h.Set("Mcp-Method", m.Method)
			h.Set("Mcp-Name", m.Params.Name+m.Params.URI)
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(data))
		r.Header = h
		s.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%q (%s): %d %s", data, version, w.Code, w.Body)
		}
		body := w.Body.Bytes()
		switch {
		case strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"):
			for _, line := range bytes.Split(body, []byte("\n")) {
				if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(d) > 0 && !json.Valid(d) {
					t.Fatalf("%q (%s): an event that is not JSON: %q", data, version, d)
				}
			}
		case strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && len(body) > 0 && !json.Valid(body):
			t.Fatalf("%q (%s): an answer that is not JSON: %q", data, version, body)
		}
	})
}

// FuzzStdio holds any input over stdio to answers that are each one line
// of JSON, and to the session ending with the input.
func FuzzStdio(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" +
		strings.Join(messageSeeds, "\n")))
	for _, s := range messageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if err := fuzzServer().ServeStdio(context.Background(), bytes.NewReader(data), &out); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Fatalf("%q: a line that is not JSON: %q", data, line)
			}
		}
	})
}
