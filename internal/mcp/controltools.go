package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/controlplane"
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

// call makes a tool call a call of the control plane's operation, with
// the caller's credential: the arguments become its path and query
// parameters and its JSON body; its answer becomes the result (the JSON
// as text and as structured content), a tool error when it is not a
// success. The control plane applies the control API's rules, refusals
// and scopes; the call counts as a control request of its own (serve).
func (c *Control) call(ctx context.Context, t *tool, call *mcpserver.ToolCall, who controlCaller) *mcpserver.ToolResult {
	args := t.split(call.Arguments, "", 0)
	if c.env.MCPMaxWait > 0 && !args.bad && slices.Contains(t.args.Query, "timeout") {
		if args.params == nil {
			args.params = map[string]json.RawMessage{}
		}
		capSeconds(args.params, "timeout", c.env.MCPMaxWait, true)
	}
	op, path, err := t.controlCall(&args)
	if err != nil {
		_, body := wire.ErrorOf(err)
		data, _ := json.Marshal(body)
		return controlResult(http.StatusBadRequest, "application/json", data)
	}
	return controlResult(c.serve(ctx, t.method, path, op, who))
}

// controlCall turns a control tool's arguments into a call of its
// operation, and the path the control API would serve it at; what is
// wrong with the arguments themselves (a path parameter left out, an
// argument the operation does not take) is the error.
func (t *tool) controlCall(args *callArgs) (*controlplane.Call, string, error) {
	if args.bad {
		return nil, "", sim.InvalidError([]sim.Violation{{In: "arguments", Reason: "the arguments must be a JSON object"}})
	}
	var violations sim.Violations
	call := &controlplane.Call{Op: t.op, Vars: map[string]string{}, Query: url.Values{}}
	path := t.path
	for _, name := range t.args.Path {
		v, ok := args.params[name]
		if !ok || string(v) == "null" {
			violations.Append(sim.Violation{In: "path", Field: name, Reason: "is required"})
			v = json.RawMessage("1") // a valid stand-in: the violation says it all
		}
		call.Vars[name] = text(v)
		path = strings.Replace(path, "{"+name+"}", call.Vars[name], 1)
	}
	for _, name := range t.args.Query {
		if v, ok := args.params[name]; ok && string(v) != "null" {
			call.Query.Set(name, text(v))
		}
	}
	switch {
	case t.args.Body && (args.body != nil || t.args.BodyRequired):
		call.Body = args.body
		if call.Body == nil {
			call.Body = []byte("{}")
		}
	case !t.args.Body:
		t.unknownArguments(args, &violations)
	}
	if err := violations.Err(); err != nil {
		return nil, "", err
	}
	if call.Body != nil || t.method != http.MethodGet {
		// The control API takes a state-changing call only as JSON (an
		// empty body may be).
		call.ContentType = "application/json"
	}
	return call, path, nil
}

// serve answers a call of the control plane's operation, made by who, as
// the control API would answer the same call at path: its status, its
// Content-Type and its body. The call is a control request of its own,
// served in process (edge.InProcess): a request id, the log lines, the
// metrics. A path parameter that a path could not carry as it is (empty,
// or holding a slash) is routed as the control API routes that path.
func (c *Control) serve(ctx context.Context, method, path string, call *controlplane.Call, who controlCaller) (int, string, []byte) {
	x := c.env.InProcess("control", method, path)
	call.Authorization, call.View = who.authorization, c.env.ViewOf(who.host, false)
	op := call.Op
	status, body, err := func() (status int, body any, err error) {
		defer func() {
			if v := recover(); v != nil {
				status, body, err = 0, nil, x.Panicked(v)
			}
		}()
		for _, v := range call.Vars {
			if v == "" || strings.Contains(v, "/") {
				m := c.table.MatchPath(method, path)
				switch {
				case m.Allow != "":
					op = ""
					return 0, nil, wire.MethodNotAllowed(method, path, m.Allow, strings.Split(m.Allow, ", "))
				case m.Name == "":
					op = ""
					return 0, nil, wire.NotFound(method, path)
				}
				op, call.Op, call.Vars = m.Name, m.Name, m.Vars
				break
			}
		}
		return c.plane.Invoke(ctx, call)
	}()
	status, contentType, data := controlplane.Encode(status, body, err)
	x.Done(op, status, err)
	return status, contentType, data
}

// ArrayKey is the member of the object that carries a control tool's
// answer as structured content when the answer is a JSON array
// (list_workspaces): MCP's structured content is an object, so the array
// is {"items": [...]}; the text content is the array as the control API
// answers it (decision D-49).
const ArrayKey = "items"

// controlResult is a control tool's answer: the control API's body as
// text, and as structured content when it is JSON (compact, its <, > and
// & escaped, as the control MCP server has always written it): an object
// as it is, an array wrapped in an object under ArrayKey; an answer that
// is not a success is a tool error carrying the control API's error
// object.
func controlResult(status int, contentType string, data []byte) *mcpserver.ToolResult {
	res := &mcpserver.ToolResult{IsError: status < 200 || status > 299}
	text := string(data)
	if len(bytes.TrimSpace(data)) == 0 {
		text = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	res.Content = []mcpserver.Content{mcpserver.Text(text)}
	if mediaType(contentType) != "application/json" || !json.Valid(data) {
		return res
	}
	switch trimmed := bytes.TrimSpace(data); {
	case bytes.HasPrefix(trimmed, []byte("{")):
		res.StructuredContent, _ = json.Marshal(json.RawMessage(data))
	case bytes.HasPrefix(trimmed, []byte("[")):
		res.StructuredContent, _ = json.Marshal(map[string]json.RawMessage{ArrayKey: data})
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
