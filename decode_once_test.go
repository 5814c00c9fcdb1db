package mediamock

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/wire"
)

// TestABodyIsDecodedOnce: the body of a createGeneration call is decoded
// once, whatever door carried it (REST; MCP sessionless, in a session
// answered by the front, in a session answered by the SDK, over stdio),
// with a fault rule standing (admission reads the modality from the
// decoded value), struck by it, and when a oneOf rule is broken (the
// violations beyond it are found on the same value). The count is the
// contract's: every JSON body it decodes (ReadBody, DecodeArguments);
// neither the admission, nor the validator, nor the handler (its input is
// bound from the value) decodes one: nothing in the pipeline decodes JSON
// with package wire's decoders (which handlers once used) either.
func TestABodyIsDecodedOnce(t *testing.T) {
	const image = `{"modality":"image","model_id":"imagen-4","prompt":"a kite"}`
	const video = `{"modality":"video","model_id":"veo-3-fast","prompt":"a kite","duration":8}`
	const encore = `{"effect":"golden-hour","image_url":"https://example.com/a.jpg","asset_id":1,"extra":1}`
	type call struct {
		op, tool, body string
		status         int    // REST's
		code           string // the error's code, "" for a success
	}
	created := call{"/generations", "create_generation", image, http.StatusCreated, ""}
	struck := call{"/generations", "create_generation", video, http.StatusServiceUnavailable, "service_unavailable"}
	oneOf := call{"/encore/creations", "create_encore_creation", encore, http.StatusBadRequest, "validation_failed"}
	scenarios := []struct {
		name  string
		rules []FaultSpec
		calls []call
	}{
		{"no rule", nil, []call{created, oneOf}},
		// mcp_stream_drop also sends a session's calls through the SDK.
		{"rules standing", []FaultSpec{{Kind: "status", Operation: "createGeneration", Modality: "video", Status: 503},
			{Kind: "mcp_stream_drop", Operation: "listModels"}}, []call{created, struck, oneOf}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			srv := RunT(t)
			for _, r := range sc.rules {
				_, err := srv.AddFault(r)
				require.NoError(t, err)
			}
			doors := decodeDoors(t, srv)
			for _, c := range sc.calls {
				for _, door := range []string{"rest", "mcp sessionless", "mcp session", "mcp stdio"} {
					before, wireBefore := srv.env.API.Decodes(), wire.Decodes()
					code := doors[door](c.op, c.tool, c.body)
					assert.Equal(t, c.code, code, "%s %s", door, c.body)
					assert.Equal(t, uint64(1), srv.env.API.Decodes()-before, "decodes of one body: %s %s", door, c.body)
					assert.Equal(t, uint64(0), wire.Decodes()-wireBefore, "decodes of one body after the contract's: %s %s", door, c.body)
				}
			}
		})
	}
}

// decodeDoors are the ways in of TestABodyIsDecodedOnce: each sends a call
// and returns its error code ("" for a success).
func decodeDoors(t *testing.T, srv *Server) map[string]func(path, tool, body string) string {
	t.Helper()
	post := func(url string, header http.Header, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header = header.Clone()
		req.Header.Set("Authorization", "Bearer "+KeyAllScopes)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(data)
	}
	toolCode := func(data string) string {
		var msg struct {
			Result struct {
				StructuredContent struct {
					Error struct{ Code string }
				}
				IsError bool
			}
			Error *struct{ Message string }
		}
		require.NoError(t, json.Unmarshal([]byte(data), &msg), "%q", data)
		require.Nil(t, msg.Error, data)
		if msg.Result.IsError {
			require.NotEmpty(t, msg.Result.StructuredContent.Error.Code, data)
		}
		return msg.Result.StructuredContent.Error.Code
	}
	accept := "application/json, text/event-stream"
	resp, body := post(srv.MCPURL(), http.Header{"Accept": {accept}},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"decodes","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	session := http.Header{"Accept": {accept}, "Mcp-Session-Id": {resp.Header.Get("Mcp-Session-Id")}, "Mcp-Protocol-Version": {"2025-11-25"}}
	resp, body = post(srv.MCPURL(), session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	stdio := newStdioSession(t, srv)
	id := 10
	return map[string]func(path, tool, body string) string{
		"rest": func(path, _, body string) string {
			_, data := post(srv.BaseURL()+path, http.Header{}, body)
			var e struct{ Error struct{ Code string } }
			require.NoError(t, json.Unmarshal([]byte(data), &e), data)
			return e.Error.Code
		},
		"mcp sessionless": func(_, tool, args string) string {
			id++
			h := http.Header{"Accept": {accept}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {tool}}
			_, data := post(srv.MCPURL(), h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,`+
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, tool, args))
			return toolCode(data)
		},
		"mcp session": func(_, tool, args string) string {
			id++
			_, data := post(srv.MCPURL(), session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
			if i := strings.LastIndex(data, "\ndata: "); i >= 0 { // the SDK answers with events
				data = strings.TrimSpace(data[i+len("\ndata: "):])
			}
			return toolCode(data)
		},
		"mcp stdio": func(_, tool, args string) string {
			id++
			return toolCode(stdio(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)))
		},
	}
}

// newStdioSession opens an MCP session over stdio with the all-scopes
// key; the function it returns sends one request and returns its answer.
func newStdioSession(t *testing.T, srv *Server) func(msg string) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeMCP(context.Background(), inR, outW, KeyAllScopes); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	t.Cleanup(func() {
		inW.Close() // the session ends with its input
		go io.Copy(io.Discard, outR)
		<-done
	})
	send := func(msg string) string {
		_, err := io.WriteString(inW, msg+"\n")
		require.NoError(t, err)
		if strings.Contains(msg, `"id"`) {
			require.True(t, lines.Scan(), "no answer: %v", lines.Err())
			return lines.Text()
		}
		return ""
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"decodes","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send
}
