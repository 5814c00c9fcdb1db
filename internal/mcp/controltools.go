package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/contract"
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
		t.def = &sdk.Tool{Name: ToolName(op.ID), Title: summary, Description: description, InputSchema: args.Schema,
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
func controlAnnotations(op contract.Operation, title string) *sdk.ToolAnnotations {
	closed := false
	a := &sdk.ToolAnnotations{Title: title, OpenWorldHint: &closed}
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
func (c *Control) call(ctx context.Context, t *tool, raw json.RawMessage, who controlCaller) *sdk.CallToolResult {
	args, bad := decodeArguments(raw)
	if c.env.MCPMaxWait > 0 && !bad && slices.Contains(t.args.Query, "timeout") {
		if args == nil {
			args = map[string]json.RawMessage{}
		}
		capSeconds(args, "timeout", c.env.MCPMaxWait, true)
	}
	r, violations, err := t.controlRequest(ctx, args, bad)
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
// text, and as structured content when it is a JSON object; an answer
// that is not a success is a tool error carrying the control API's error
// object.
func controlResult(status int, contentType string, data []byte) *sdk.CallToolResult {
	res := &sdk.CallToolResult{IsError: status < 200 || status > 299}
	text := string(data)
	if len(bytes.TrimSpace(data)) == 0 {
		text = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	res.Content = []sdk.Content{&sdk.TextContent{Text: text}}
	if mediaType(contentType) == "application/json" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && json.Valid(data) {
		res.StructuredContent = json.RawMessage(data)
	}
	return res
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

// controlRequest builds the control API's HTTP request of a control tool's
// arguments: path parameters into the path, query parameters into the
// query string, the other arguments into the JSON body. It returns the
// violations only a tool can commit (a missing path parameter, an unknown
// argument of a tool without a body). (The service's tools make no
// request: their arguments are the operation's input, ops.Invocation.)
func (t *tool) controlRequest(ctx context.Context, args map[string]json.RawMessage, bad bool) (*http.Request, []sim.Violation, error) {
	if bad {
		return nil, nil, sim.InvalidError([]sim.Violation{{In: "arguments", Reason: "the arguments must be a JSON object"}})
	}
	var violations []sim.Violation
	path := t.path
	for _, name := range t.args.Path {
		v, ok := args[name]
		delete(args, name)
		if !ok || string(v) == "null" {
			violations = append(violations, sim.Violation{In: "path", Field: name, Reason: "is required"})
			v = json.RawMessage("1") // a valid stand-in: the violation says it all
		}
		path = strings.Replace(path, "{"+name+"}", url.PathEscape(text(v)), 1)
	}
	query := url.Values{}
	for _, name := range t.args.Query {
		if v, ok := args[name]; ok {
			delete(args, name)
			if string(v) != "null" {
				query.Set(name, text(v))
			}
		}
	}
	var body []byte
	switch {
	case t.args.Body && (len(args) > 0 || t.args.BodyRequired):
		body = objectOf(args)
	case !t.args.Body:
		for _, name := range slices.Sorted(maps.Keys(args)) {
			violations = append(violations, sim.Violation{In: "arguments", Field: name, Reason: "unknown field", Allowed: t.names})
		}
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var r *http.Request
	var err error
	if body != nil {
		r, err = http.NewRequestWithContext(ctx, t.method, target, bytes.NewReader(body))
		if err == nil {
			r.Header.Set("Content-Type", "application/json")
		}
	} else {
		r, err = http.NewRequestWithContext(ctx, t.method, target, nil)
	}
	if err != nil {
		return nil, nil, sim.InvalidError([]sim.Violation{{In: "arguments", Reason: err.Error()}})
	}
	return r, violations, nil
}

// objectOf writes arguments as a JSON object, keys sorted and values as
// sent.
func objectOf(args map[string]json.RawMessage) []byte {
	keys := slices.Sorted(maps.Keys(args))
	size := 2
	for _, k := range keys {
		size += len(k) + 8 + len(args[k])
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		name, _ := json.Marshal(k)
		buf = append(append(buf, name...), ':')
		if v := bytes.TrimSpace(args[k]); len(v) > 0 {
			buf = append(buf, v...)
		} else {
			buf = append(buf, "null"...)
		}
	}
	return append(buf, '}')
}
