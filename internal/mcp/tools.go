package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/sim"
)

// tool is one operation as an MCP tool.
type tool struct {
	def          mcpserver.Tool
	op           string
	method, path string // the REST form: GET /generations/{id}
	args         contract.Arguments
	names        []any // every argument, for unknown-argument errors
}

// buildTools derives one tool per operation of openapi.json that names one
// (x-mcp-tool), in the document's order: its name, schema, title,
// description and annotations all come from the document.
func buildTools(api *contract.Contract) ([]*tool, error) {
	var out []*tool
	for _, op := range api.Operations() {
		if op.Tool == "" {
			continue
		}
		args, err := api.Arguments(op.ID)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %s: %w", op.Tool, err)
		}
		summary, description := api.Describe(op.ID)
		if op.ToolDescription != "" {
			description = op.ToolDescription
		}
		if scope := "Required scope: `" + op.Scope + "`."; !strings.Contains(description, scope) {
			description += "\n\n" + scope
		}
		if _, waits := args.Schema["properties"].(map[string]any)["wait_seconds"]; waits {
			description += " While it waits, the call sends progress notifications (queued, processing, completed) when the request carries a progress token."
		}
		t := &tool{op: op.ID, method: op.Method, path: op.Path, args: args}
		for name := range args.Schema["properties"].(map[string]any) {
			t.names = append(t.names, name)
		}
		slices.SortFunc(t.names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		t.def = mcpserver.Tool{Name: op.Tool, Title: summary, Description: description, InputSchema: args.Schema, Annotations: annotations(op, summary)}
		out = append(out, t)
	}
	return out, nil
}

// annotations tell clients what a tool does to the world, as openapi.json
// says of its operation: reads are read-only and idempotent; creations add
// to the workspace (and may spend credits) without destroying anything;
// publishing posts publicly, which cannot be taken back (x-destructive),
// and reaches the social networks (x-open-world), for clients that ask
// before such calls.
func annotations(op contract.Operation, title string) *mcpserver.ToolAnnotations {
	a := &mcpserver.ToolAnnotations{Title: title, OpenWorldHint: &op.OpenWorld}
	if op.ReadOnly {
		a.ReadOnlyHint, a.IdempotentHint = true, true
	} else {
		a.DestructiveHint = &op.Destructive
	}
	return a
}

// toolCall is a call of a tool, as the front reads it.
type toolCall struct {
	tool *tool
	// args are the call's arguments taken apart, each value as sent:
	// they become the operation's input.
	args callArgs
	raw  json.RawMessage // the arguments as sent, for the journal of a call over stdio
	// progress, when the call carries a progress token, reports the
	// statuses a long poll reads.
	progress func(status string)
	// drop ends the call's stream before its result, for a fault of the
	// call stage.
	drop func()
}

// toolHandler answers the calls of a tool: each is a call of its
// operation (invoke).
func (f *Front) toolHandler(t *tool) mcpserver.ToolHandler {
	return func(ctx context.Context, call *mcpserver.ToolCall) *mcpserver.ToolResult {
		c := callerFrom(ctx)
		tc := toolCall{tool: t, raw: json.RawMessage(call.Arguments)}
		tc.args = t.split(call.Arguments, "wait_seconds", f.env.MCPMaxWait)
		if call.Progress != nil {
			tc.progress = progress(call.Progress)
		}
		tc.drop = func() {
			// A session's stream is dropped and resumed; a stream that
			// cannot resume (sessionless, or one JSON body) breaks.
			if !call.DropStream() && c.out != nil {
				c.out.w.Abort()
			}
		}
		res, release := f.invoke(ctx, tc, c)
		res.Release = release // once the answer is built from it
		return res
	}
}

// invoke runs a tool call through the operations' pipeline (ops.Invoke):
// the arguments become the operation's input; the answer becomes the
// tool's result. Over HTTP the call counts as the principal the request
// authenticated as; over stdio it authenticates with the caller's key. The
// journal records the call with the HTTP request that carried it, or, over
// stdio, as an entry of its own. release gives the operation's body buffer
// back: once the result has been written, nothing may hold it after.
func (f *Front) invoke(ctx context.Context, tc toolCall, c caller) (_ *mcpserver.ToolResult, release func()) {
	env, t := f.env, tc.tool
	started := env.WallClock()
	if tc.progress != nil {
		ctx = sim.WithProgress(ctx, tc.progress)
	}
	in := ops.Invocation{Ctx: ctx, Front: "mcp", Op: t.op, Authorization: c.authorization, View: c.view,
		Admitted: func(p gate.Pass) {
			if p.Authenticated() {
				c.out.rate(p.Rate)
			}
		}}
	capSeconds(tc.args.params, "wait_seconds", env.MCPMaxWait, false)
	t.input(f.ops.API, &tc.args, &in)
	if c.out != nil {
		in.RequestID = c.requestID
		in.Faults = c.out.w
		in.Principal = c.principal
	} else {
		in.Faults = f.offEdge
	}
	res := ops.Invoke(f.ops, &in)
	if c.out != nil && c.out.w.Faultable() {
		if h := c.out.w.CallFault(t.op, res.Pass.Principal.WorkspaceID); h != nil {
			h.Call(streamDrop(tc.drop))
		}
	}
	data := oneLine(bytes.TrimSuffix(res.Body(), []byte("\n")))
	call := edge.Call{Operation: t.op, Status: res.Status, ErrorCode: res.ErrorCode, Outside: res.Outside}
	if c.out != nil {
		c.out.note(call)
	} else {
		off := call // on the heap over stdio alone
		env.RecordOffEdge("mcp", edge.Outcome{Principal: &res.Pass.Principal, MCPMethod: "tools/call", Call: &off}, res.Latency, started,
			edge.Bodies{Request: tc.raw, Response: data, RequestBytes: int64(len(tc.raw)), ResponseBytes: int64(len(data))})
	}
	if l := res.List(); l != nil {
		// What a list page says is known without reading its bytes.
		if text, ok := listSummary(t, res.Status, l); ok && res.ErrorCode == "" {
			return &mcpserver.ToolResult{StructuredContent: data, Content: []mcpserver.Content{mcpserver.Text(text)}}, res.Release
		}
		return result(t, res.Status, data, listDigest(l), res.ErrorCode != ""), res.Release
	}
	return result(t, res.Status, data, digestOf(data), res.ErrorCode != "" || res.Status >= 400), res.Release
}

// oneLine is a JSON body as one line: a body of a status rule, sent byte
// for byte, may hold line breaks, which an MCP message on stdio or in an
// event stream cannot. In JSON a raw line break is only ever whitespace
// between tokens (inside a string it is escaped), so each becomes a space,
// in a copy: the body is the rule's own. The server's own bodies have none.
func oneLine(data []byte) []byte {
	// Two searches of one byte (vectorised), not ContainsAny's walk of
	// every byte: most bodies (every one the simulation writes) have none.
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return data
	}
	out := bytes.Clone(data)
	for i, c := range out {
		if c == '\r' || c == '\n' {
			out[i] = ' '
		}
	}
	return out
}

// streamDrop ends a call's stream, for a fault of the call stage (nil:
// the call has no stream to end).
type streamDrop func()

func (d streamDrop) DropStream() {
	if d != nil {
		d()
	}
}

// input makes a tool's arguments the operation's input: path parameters
// and query parameters as the strings a REST request would carry, the
// other arguments as its JSON body (one object of them, as sent), decoded
// once when the pipeline asks for it; so that openapi.json judges the
// arguments as it judges a REST request. The violations only a tool can
// commit (a missing path parameter, an unknown argument of a tool without
// a body) are the invocation's Extra.
func (t *tool) input(api *contract.Contract, args *callArgs, in *ops.Invocation) {
	if args.bad {
		in.Invalid = sim.InvalidError([]sim.Violation{{In: "arguments", Reason: "the arguments must be a JSON object"}})
		return
	}
	in.Query = url.Values{}
	if len(t.args.Path) > 0 {
		in.Path = make(map[string]string, len(t.args.Path))
	}
	for _, name := range t.args.Path {
		v, ok := args.params[name]
		if !ok || string(v) == "null" {
			in.Extra.Append(sim.Violation{In: "path", Field: name, Reason: "is required"})
			v = json.RawMessage("1") // a valid stand-in: the violation says it all
		}
		in.Path[name] = text(v)
	}
	for _, name := range t.args.Query {
		if v, ok := args.params[name]; ok && string(v) != "null" {
			in.Query.Set(name, text(v))
		}
	}
	switch body := args.body; {
	case t.args.Body && (body != nil || t.args.BodyRequired):
		if body == nil {
			body = []byte("{}")
		}
		in.Body = func() contract.Body { return api.ArgumentsBody(body) }
	case !t.args.Body:
		t.unknownArguments(args, &in.Extra)
	}
}

// capSeconds lowers a call's wait argument name (wait_seconds of a
// service tool, timeout of the journal's wait) to limit seconds when
// limit is positive, and sets it when absent if orSet (where the
// operation's own default may be longer): the call answers, with the job
// as it then is, before an MCP client that gives up on a long call does.
// A wait that is not a number is left to the validator. capped says the
// arguments changed.
func capSeconds(args map[string]json.RawMessage, name string, limit int, orSet bool) (capped bool) {
	if limit <= 0 {
		return false
	}
	v, ok := args[name]
	var n float64
	if !ok && orSet || ok && json.Unmarshal(v, &n) == nil && n > float64(limit) {
		args[name] = json.RawMessage(strconv.Itoa(limit))
		return true
	}
	return false
}

// text renders an argument as a parameter value: a string as itself,
// anything else as its JSON.
func text(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) > 0 && t[0] != '"' && string(t) != "null" {
		return string(t) // not a string: decoding it would only fail
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(t)
}

// result is a tool's answer: the operation's JSON as structured content and
// a short text made from its digest; an error is a tool error carrying the
// spec's error object.
func result(t *tool, status int, data []byte, d *digest, isError bool) *mcpserver.ToolResult {
	res := &mcpserver.ToolResult{StructuredContent: data, IsError: isError,
		Content: []mcpserver.Content{mcpserver.Text(summarize(t, status, d))}}
	if !isError {
		res.Content = append(res.Content, assetLinks(d)...)
	}
	return res
}

// progress reports the statuses a long poll reads as MCP progress
// notifications, through notify: queued 0, processing 1, final 2 of 2,
// each once.
func progress(notify func(p, total float64, status string)) func(string) {
	last := -1.0
	return func(status string) {
		var p float64
		switch status {
		case sim.StatusQueued:
			p = 0
		case sim.StatusProcessing:
			p = 1
		default:
			p = 2
		}
		if p <= last {
			return
		}
		last = p
		notify(p, 2, status)
	}
}
