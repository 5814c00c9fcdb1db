package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/mcpserver"
)

// callerKey carries the toy front's caller: identity travels read-only in
// the request's context.
type callerKey struct{}

// toy is a server with a tool of each kind, a resource, a template whose
// reads stream, and a prompt.
func toy(t testing.TB, opts mcpserver.Options) *mcpserver.Server {
	t.Helper()
	var n atomic.Uint64
	if opts.NewSessionID == nil {
		opts.NewSessionID = func() string { return fmt.Sprintf("toy_%d", n.Add(1)) }
	}
	opts.Implementation = &mcpserver.Implementation{Name: "toy", Version: "1"}
	opts.Owner = func(ctx context.Context) string { who, _ := ctx.Value(callerKey{}).(string); return who }
	opts.Capabilities = mcpserver.Capabilities{Tools: true, Resources: true, Prompts: true, Logging: true}
	s := mcpserver.New(opts)
	readOnly := true
	require.NoError(t, s.AddTool(mcpserver.Tool{Name: "echo", Title: "Echo", Description: "Says its arguments back, and who called.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Annotations: &mcpserver.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &readOnly}},
		func(ctx context.Context, call *mcpserver.ToolCall) *mcpserver.ToolResult {
			who, _ := ctx.Value(callerKey{}).(string)
			var args map[string]any
			if err := json.Unmarshal(call.Arguments, &args); call.Arguments != nil && err != nil {
				return &mcpserver.ToolResult{Content: []mcpserver.Content{mcpserver.Text("the arguments are not an object")}, IsError: true}
			}
			out, _ := json.Marshal(map[string]any{"args": args, "caller": who})
			return &mcpserver.ToolResult{Content: []mcpserver.Content{mcpserver.Text(string(out))}, StructuredContent: out}
		}))
	require.NoError(t, s.AddTool(mcpserver.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, call *mcpserver.ToolCall) *mcpserver.ToolResult {
			for i := range 3 {
				if call.Progress != nil {
					call.Progress(float64(i), 3, fmt.Sprintf("step %d", i))
				}
			}
			if strings.Contains(string(call.Arguments), "forever") {
				<-ctx.Done()
				return &mcpserver.ToolResult{Content: []mcpserver.Content{mcpserver.Text("cancelled")}, IsError: true}
			}
			if strings.Contains(string(call.Arguments), "drop") && !call.DropStream() {
				return &mcpserver.ToolResult{Content: []mcpserver.Content{mcpserver.Text("no stream to drop")}, IsError: true}
			}
			return &mcpserver.ToolResult{Content: []mcpserver.Content{mcpserver.Text("waited")}}
		}))
	s.AddResource(mcpserver.Resource{URI: "toy://hello", Name: "hello", MIMEType: "text/plain"},
		func(ctx context.Context, uri string) (*mcpserver.ReadResult, error) {
			return &mcpserver.ReadResult{Contents: []mcpserver.ResourceContents{{Text: "hello"}}}, nil
		})
	s.AddResourceTemplate(mcpserver.ResourceTemplate{URITemplate: "toy://files/{name}", Name: "file", MIMEType: "application/octet-stream"},
		func(ctx context.Context, uri string) (*mcpserver.ReadResult, error) {
			name := strings.TrimPrefix(uri, "toy://files/")
			if name == "missing" {
				return nil, mcpserver.ResourceNotFound(uri)
			}
			data := bytes.Repeat([]byte(name), 1000)
			return &mcpserver.ReadResult{CacheScope: "private", Contents: []mcpserver.ResourceContents{{BlobReader: bytes.NewReader(data), BlobSize: int64(len(data))}}}, nil
		}, mcpserver.Streamed)
	s.AddPrompt(mcpserver.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []mcpserver.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, args map[string]string) (*mcpserver.PromptResult, error) {
			return &mcpserver.PromptResult{Messages: []mcpserver.PromptMessage{{Role: "user", Content: mcpserver.Text("Hello, " + args["who"] + "!")}}}, nil
		})
	return s
}

// front serves s as a front does: the caller (the bearer token) goes into
// the request's context, and owns the sessions it opens.
func front(s *mcpserver.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.Serve(context.WithValue(r.Context(), callerKey{}, who), w, r)
	})
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func connect(t *testing.T, url, who, version string, progress func(*sdk.ProgressNotificationParams)) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if progress != nil {
				progress(req.Params)
			}
		}})
	transport := &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: 2, HTTPClient: &http.Client{Transport: bearer{who, http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestGoSDKClient: the official Go SDK's client, in a session (the
// handshake era) and sessionless, uses every method of the server.
func TestGoSDKClient(t *testing.T) {
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", ""} {
		name := version
		if name == "" {
			name = "sessionless"
		}
		t.Run(name, func(t *testing.T) {
			hs := httptest.NewServer(front(toy(t, mcpserver.Options{EventBytes: 1 << 20, DirectCalls: true, ProgressStreams: true})))
			t.Cleanup(hs.Close)
			var mu sync.Mutex
			var steps []string
			cs := connect(t, hs.URL, "ada", version, func(p *sdk.ProgressNotificationParams) {
				mu.Lock()
				steps = append(steps, p.Message)
				mu.Unlock()
			})
			ctx := context.Background()
			tools, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			require.Len(t, tools.Tools, 2)
			assert.Equal(t, "echo", tools.Tools[0].Name, "by name")
			assert.True(t, tools.Tools[0].Annotations.ReadOnlyHint)

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.Equal(t, map[string]any{"args": map[string]any{"text": "hi"}, "caller": "ada"}, res.StructuredContent, "the caller came in the context")

			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "wait", Arguments: map[string]any{}, Meta: sdk.Meta{"progressToken": "p"}})
			require.NoError(t, err)
			assert.Equal(t, "waited", res.Content[0].(*sdk.TextContent).Text)
			// The client hands notifications to its handler on a goroutine
			// of its own: they may come after the result.
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(steps) == 3
			}, 10*time.Second, time.Millisecond)
			assert.Equal(t, []string{"step 0", "step 1", "step 2"}, steps)

			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "nothing", Arguments: map[string]any{}})
			assert.ErrorContains(t, err, `unknown tool "nothing"`)

			read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "toy://hello"})
			require.NoError(t, err)
			assert.Equal(t, "hello", read.Contents[0].Text)
			assert.Equal(t, "text/plain", read.Contents[0].MIMEType)
			file, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "toy://files/ab"})
			require.NoError(t, err)
			assert.Equal(t, bytes.Repeat([]byte("ab"), 1000), file.Contents[0].Blob)
			_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "toy://files/missing"})
			assert.ErrorContains(t, err, "Resource not found")

			templates, err := cs.ListResourceTemplates(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, "toy://files/{name}", templates.ResourceTemplates[0].URITemplate)
			prompts, err := cs.ListPrompts(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, "greet", prompts.Prompts[0].Name)
			got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "Grace"}})
			require.NoError(t, err)
			assert.Equal(t, "Hello, Grace!", got.Messages[0].Content.(*sdk.TextContent).Text)
			if version != "" {
				require.NoError(t, cs.Ping(ctx, nil))
				require.NoError(t, cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}))
			}
		})
	}
}

// TestSessionsBelongToTheirOwner: another owner's request on a session is
// refused, and the session goes on.
func TestSessionsBelongToTheirOwner(t *testing.T) {
	hs := httptest.NewServer(front(toy(t, mcpserver.Options{})))
	defer hs.Close()
	header := func(who, session string) http.Header {
		return http.Header{"Authorization": {"Bearer " + who}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Session-Id": {session}, "Mcp-Protocol-Version": {"2025-11-25"}}
	}
	init := post(t, hs.URL, header("ada", ""), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := init.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	other := post(t, hs.URL, header("bob", id), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Equal(t, http.StatusForbidden, other.StatusCode)
	mine := post(t, hs.URL, header("ada", id), `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, mine.StatusCode)
	assert.Contains(t, mine.body, `"id":3,"result":{}`)
}

type answer struct {
	*http.Response
	body string
}

func post(t *testing.T, url string, h http.Header, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp, string(data)}
}

// TestCancelEndsACall: notifications/cancelled ends the call it names,
// which then answers.
func TestCancelEndsACall(t *testing.T) {
	s := toy(t, mcpserver.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	_, err := lines.ReadString('\n')
	require.NoError(t, err)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"forever":true}}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`+"\n")
	got, err := lines.ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, got, `"id":2,"result":{"content":[{"type":"text","text":"cancelled"}],"isError":true}`)
	inW.Close()
	require.NoError(t, <-done)
}

// stdioModes are the ways a stdio session speaks: each handshake-era
// revision after its initialize, and the sessionless revision.
var stdioModes = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// TestStdioAnswersEveryLine: in every mode, any line (not JSON, not a
// message, a batch where the revision refuses batches, an unknown method,
// a line over the cap) gets its JSON-RPC answer and the session goes on;
// at the end of input every request read is answered.
func TestStdioAnswersEveryLine(t *testing.T) {
	for _, mode := range stdioModes {
		t.Run(mode, func(t *testing.T) {
			s := toy(t, mcpserver.Options{})
			meta := ""
			var lines []string
			if mode < "2026" {
				lines = append(lines, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mode+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			} else {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
				lines = append(lines, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta[1:]+`}}`)
			}
			call := func(id int) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%d"}%s}}`, id, id, meta)
			}
			lines = append(lines,
				`not json`,
				`{"jsonrpc":"2.0","id":2,"method":"ping"} trailing`,
				`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
				`[]`,
				"["+call(3)+","+call(4)+"]",
				`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`,
				`"`+strings.Repeat("x", mcpserver.MaxStdioLine+10)+`"`,
				call(6),
			)
			var out bytes.Buffer
			require.NoError(t, s.ServeStdio(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out))
			answered := map[string]bool{}
			nulls := 0
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var msgs []map[string]any
				if strings.HasPrefix(line, "[") {
					require.NoError(t, json.Unmarshal([]byte(line), &msgs), line)
				} else {
					var m map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &m), "%.200s", line)
					msgs = append(msgs, m)
				}
				for _, m := range msgs {
					if m["id"] == nil {
						nulls++
						continue
					}
					answered[fmt.Sprint(m["id"])] = true
				}
			}
			assert.True(t, answered["1"] && answered["5"] && answered["6"], "%v", answered)
			batches := mode < "2025-06-18"
			assert.Equal(t, batches, answered["3"] && answered["4"], "the batch's calls are answered where the revision has batches")
			want := 5 // not JSON, trailing data, an object id, an empty batch, the long line
			if !batches {
				want++ // the batch is refused
			}
			assert.Equal(t, want, nulls, out.String())
		})
	}
}

// TestStdioBatchWaitsForEveryAnswer: over stdio, a batch's answer is one
// array of every request's answer, whichever comes first: a request
// refused at its admission (answered at once) does not send the batch
// before the others have their answers.
func TestStdioBatchWaitsForEveryAnswer(t *testing.T) {
	for _, mode := range []string{"2024-11-05", "2025-03-26"} {
		t.Run(mode, func(t *testing.T) {
			s := toy(t, mcpserver.Options{})
			lines := []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mode + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"not an object"},` +
					`{"jsonrpc":"2.0","id":3,"method":"ping"},` +
					`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"four"}}}]`,
			}
			var out bytes.Buffer
			require.NoError(t, s.ServeStdio(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out))
			got := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Len(t, got, 2, "the initialize's answer and the batch's: %s", out.String())
			var batch []struct {
				ID    int             `json:"id"`
				Error json.RawMessage `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(got[1]), &batch), got[1])
			require.Len(t, batch, 3, "every request of the batch answered in its array: %s", got[1])
			assert.Equal(t, []int{2, 3, 4}, []int{batch[0].ID, batch[1].ID, batch[2].ID}, "in the batch's order")
			assert.NotEmpty(t, batch[0].Error, "the refused one is refused")
			assert.Empty(t, batch[2].Error)
		})
	}
}

// TestStreamDropResumes: a call whose stream is dropped (in a session,
// when events are kept) is resumed by the Go SDK's client, which reads
// the result the server kept.
func TestStreamDropResumes(t *testing.T) {
	hs := httptest.NewServer(front(toy(t, mcpserver.Options{EventBytes: 1 << 20})))
	t.Cleanup(hs.Close)
	cs := connect(t, hs.URL, "ada", "2025-11-25", nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "wait", Arguments: map[string]any{"drop": true}})
	require.NoError(t, err)
	assert.Equal(t, "waited", res.Content[0].(*sdk.TextContent).Text, "read after the stream resumed")
}

// TestSessionCapsHoldUnderConcurrency: parallel initializes never exceed
// an owner's cap nor the server's.
func TestSessionCapsHoldUnderConcurrency(t *testing.T) {
	s := toy(t, mcpserver.Options{Limits: mcpserver.Limits{Sessions: 40, PerOwner: 16,
		Refuse: func(scope string, limit int) *mcpserver.Error {
			return mcpserver.Errorf(-32001, "too many sessions (%s, %d)", scope, limit)
		}}})
	hs := httptest.NewServer(front(s))
	defer hs.Close()
	open := func(who string, n int) int {
		var wg sync.WaitGroup
		var opened atomic.Int64
		for range n {
			wg.Go(func() {
				a := post(t, hs.URL, http.Header{"Authorization": {"Bearer " + who}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}},
					`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				if a.Header.Get("Mcp-Session-Id") != "" {
					opened.Add(1)
				}
			})
		}
		wg.Wait()
		return int(opened.Load())
	}
	assert.Equal(t, 16, open("ada", 60), "the owner's cap")
	assert.Equal(t, 16, s.Sessions())
	for _, who := range []string{"b", "c", "d"} {
		open(who, 30)
		assert.LessOrEqual(t, s.Sessions(), 40, "the server's cap")
	}
	assert.Equal(t, 40, s.Sessions())
}
