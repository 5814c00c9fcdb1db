package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// controlTools derives one tool per operation of control.json, in the
// document's order: its name is the operationId in snake case, its input
// schema merges the path and query parameters and the JSON body's
// properties, its title and description are the operation's, and its
// annotations follow from the method. An operation whose answer is not
// JSON, or whose body is not, is no tool: the event stream
// (text/event-stream, which no tool result can carry as it comes) and the
// snapshot and its restore (a binary state of up to gigabytes).
func controlTools(doc *contract.Contract, prefix string) ([]*tool, error) {
	var out []*tool
	for _, op := range doc.Operations() {
		if !ControlToolable(doc, op.ID) {
			continue
		}
		args, err := doc.Arguments(op.ID)
		if err != nil {
			return nil, fmt.Errorf("control mcp: tool of %s: %w", op.ID, err)
		}
		summary, description := doc.Describe(op.ID)
		description = strings.TrimSpace(summary + ". " + description)
		if reach, ok := doc.Extension(op.ID, "x-sandbox"); ok {
			switch reach {
			case "scoped":
				description += "\n\nA sandbox's control token scopes it to its sandbox."
			case "own":
				description += "\n\nA sandbox's control token reaches its sandbox's own records only."
			case "shared":
				description += "\n\nIt needs the server's control token (when the server has one): a sandbox's is refused."
			}
		}
		if description == "." {
			description = ""
		}
		if slices.Contains(args.Query, "timeout") {
			description += "\n\nIt waits on the wall clock, up to its timeout: the server's --mcp-max-wait, when set, caps the timeout (and is the timeout when none is given)."
		}
		t := &tool{}
		*t = tool{op: op.ID, method: op.Method, path: prefix + op.Path, args: args}
		for name := range args.Schema["properties"].(map[string]any) {
			t.names = append(t.names, name)
		}
		slices.SortFunc(t.names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		t.def = mcpserver.Tool{Name: ToolName(op.ID), Title: summary, Description: description, InputSchema: args.Schema,
			Annotations: controlAnnotations(op, summary)}
		out = append(out, t)
	}
	return out, nil
}

// ControlToolable reports whether an operation of control.json is a tool
// of the control MCP server: its request body, if it has one, and its
// successful answers are JSON.
func ControlToolable(doc *contract.Contract, opID string) bool {
	r := doc.Route(opID)
	if r == nil {
		return false
	}
	if rb := r.Operation.RequestBody; rb != nil && rb.Value != nil && rb.Value.Content.Get("application/json") == nil {
		return false
	}
	if r.Operation.Responses == nil {
		return false
	}
	for code, resp := range r.Operation.Responses.Map() {
		if !strings.HasPrefix(code, "2") || resp.Value == nil || len(resp.Value.Content) == 0 {
			continue
		}
		if resp.Value.Content.Get("application/json") == nil {
			return false
		}
	}
	return true
}

// ToolName is an operationId in snake case, as a tool's name:
// createSandbox is create_sandbox.
func ToolName(opID string) string {
	var b strings.Builder
	for i, r := range opID {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// controlAnnotations tell clients what a control tool does to the
// simulation: a GET reads (read-only, idempotent); a PUT or a DELETE sets
// or removes (idempotent); a DELETE and a reset destroy what was there.
// None reaches beyond the simulation.
func controlAnnotations(op contract.Operation, title string) *mcpserver.ToolAnnotations {
	closed := false
	a := &mcpserver.ToolAnnotations{Title: title, OpenWorldHint: &closed}
	switch op.Method {
	case http.MethodGet, http.MethodHead:
		a.ReadOnlyHint, a.IdempotentHint = true, true
		return a
	case http.MethodPut, http.MethodDelete:
		a.IdempotentHint = true
	}
	destructive := op.Destructive || strings.HasSuffix(op.Path, "/reset") || op.Path == "/reset"
	a.DestructiveHint = &destructive
	return a
}

// call makes a tool call a request to the control API, in process, with
// the caller's credential: the arguments become its path, query and JSON
// body; its answer becomes the result (the JSON as text and as structured
// content), a tool error when it is not a success.
func (c *Control) call(ctx context.Context, t *tool, call *mcpserver.ToolCall, who controlCaller) *mcpserver.ToolResult {
	args, _, bad := arguments(call)
	if c.env.MCPMaxWait > 0 && !bad && slices.Contains(t.args.Query, "timeout") {
		if args == nil {
			args = map[string]json.RawMessage{}
		}
		capSeconds(args, "timeout", c.env.MCPMaxWait, true)
	}
	r, _, _, violations, err := t.request(ctx, args, nil, bad)
	if err == nil && len(violations) > 0 {
		err = sim.InvalidError(violations)
	}
	if err != nil {
		_, body := wire.ErrorOf(err)
		data, _ := json.Marshal(body)
		return controlResult(http.StatusBadRequest, "application/json", data)
	}
	if r.Method != http.MethodGet && r.Header.Get("Content-Type") == "" {
		// The control API takes a state-changing request only with a
		// JSON Content-Type (an empty body may be).
		r.Header.Set("Content-Type", "application/json")
	}
	if who.authorization != "" {
		r.Header.Set("Authorization", who.authorization)
	}
	r.Host = who.host
	r.RemoteAddr = "127.0.0.1:0" // in process
	rec := &recorder{header: http.Header{}}
	c.api.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return controlResult(rec.status, rec.header.Get("Content-Type"), rec.body.Bytes())
}

// controlResult is a control tool's answer: the control API's body as
// text, and as structured content when it is a JSON object (compact, its
// <, > and & escaped, as the control MCP server has always written it);
// an answer that is not a success is a tool error carrying the control
// API's error object.
func controlResult(status int, contentType string, data []byte) *mcpserver.ToolResult {
	res := &mcpserver.ToolResult{IsError: status < 200 || status > 299}
	text := string(data)
	if len(bytes.TrimSpace(data)) == 0 {
		text = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	res.Content = []mcpserver.Content{mcpserver.Text(text)}
	if mediaType(contentType) == "application/json" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && json.Valid(data) {
		res.StructuredContent, _ = json.Marshal(json.RawMessage(data))
	}
	return res
}

// mediaType is a Content-Type's media type, "" when it is not one.
func mediaType(v string) string {
	if v == "application/json" {
		return v
	}
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

// recorder keeps the control API's answer to an in-process request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
