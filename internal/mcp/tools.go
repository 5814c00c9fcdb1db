package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// toolNames names one tool per operation, for what it does, in the order
// of the specification. A description replaces the operation's where the
// REST one speaks of HTTP.
var toolNames = []struct{ name, op, description string }{
	{"get_account", "getAccount", ""},
	{"list_models", "listModels", ""},
	{"create_generation", "createGeneration", ""},
	{"get_generation", "getGeneration", ""},
	{"list_assets", "listAssets", ""},
	{"get_asset", "getAsset", "Returns the generation that created the asset, like get_generation: generated, Encore-produced or uploaded. " +
		"With `wait_seconds` the answer waits until every asset of the generation is final or the wait ends."},
	{"create_upload", "createUpload", "Imports one image into the library; free. `image_url` is a public https URL or a base64 `data:` URI. " +
		"JPEG, PNG and WEBP are accepted, detected from the bytes; at most 10 MiB."},
	{"list_encore_effects", "listEncoreEffects", ""},
	{"create_encore_creation", "createEncoreCreation", ""},
	{"get_encore_creation", "getEncoreCreation", ""},
	{"list_characters", "listCharacters", ""},
	{"list_brand_kits", "listBrandKits", ""},
	{"list_projects", "listProjects", ""},
	{"list_social_accounts", "listSocialAccounts", ""},
	{"list_publications", "listPublications", ""},
	{"create_publication", "createPublication", ""},
	{"get_publication", "getPublication", ""},
}

// tool is one operation as an MCP tool.
type tool struct {
	def          *sdk.Tool
	op           string
	scope        string
	title        string
	method, path string // the REST form: GET /generations/{id}
	args         contract.Arguments
	names        []any // every argument, for unknown-argument errors
}

// buildTools derives the tools from openapi.json: every operation must have
// one, and every tool's schema, title and description come from the
// document.
func buildTools(env *front.Env) ([]*tool, error) {
	forms := map[string]ops.Operation{}
	for _, o := range ops.Operations() {
		forms[o.ID] = o
	}
	if len(forms) != len(toolNames) {
		return nil, fmt.Errorf("mcp: %d tools for %d operations", len(toolNames), len(forms))
	}
	var out []*tool
	for _, tn := range toolNames {
		form, ok := forms[tn.op]
		if !ok {
			return nil, fmt.Errorf("mcp: tool %s: no operation %s", tn.name, tn.op)
		}
		args, err := env.API.Arguments(tn.op)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %s: %w", tn.name, err)
		}
		summary, description := env.API.Describe(tn.op)
		scope := env.API.Scope(tn.op)
		if tn.description != "" {
			description = tn.description + "\n\nRequired scope: `" + scope + "`."
		}
		if _, waits := args.Schema["properties"].(map[string]any)["wait_seconds"]; waits {
			description += " While it waits, the call sends progress notifications (queued, processing, completed) when the request carries a progress token."
		}
		t := &tool{op: tn.op, scope: scope, title: summary, method: form.Method, path: form.Path, args: args}
		for name := range args.Schema["properties"].(map[string]any) {
			t.names = append(t.names, name)
		}
		slices.SortFunc(t.names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		t.def = &sdk.Tool{Name: tn.name, Title: summary, Description: description, InputSchema: args.Schema, Annotations: annotations(tn.op, form.Method, summary)}
		out = append(out, t)
	}
	return out, nil
}

// annotations tell clients what a tool does to the world: reads are
// read-only; creations add to the workspace (and spend credits) without
// destroying anything; publishing posts publicly, which cannot be taken
// back, so it is marked destructive and open-world for clients that ask
// before such calls.
func annotations(op, method, title string) *sdk.ToolAnnotations {
	no, yes := false, true
	a := &sdk.ToolAnnotations{Title: title, OpenWorldHint: &no}
	switch {
	case method == http.MethodGet:
		a.ReadOnlyHint, a.IdempotentHint = true, true
	case op == "createPublication":
		a.DestructiveHint, a.OpenWorldHint = &yes, &yes
	default:
		a.DestructiveHint = &no
	}
	return a
}

// call runs a tool call: the gate, the arguments as the operation's HTTP
// request validated against openapi.json, injected latency, the operation's
// handler; then the result, its strict check and its bookkeeping.
func (f *Front) call(ctx context.Context, t *tool, req *sdk.CallToolRequest, c caller) *sdk.CallToolResult {
	env := f.env
	started := env.WallClock()
	raw := req.Params.Arguments
	pass, err := env.Gate.Enter(c.authorization, t.op, t.scope)
	if pass.Authenticated() {
		c.x.rate(pass.Rate)
	}
	hreq, vars, query, extra, rerr := t.request(ctx, raw)
	var latency time.Duration
	status, body := 0, any(nil)
	if err == nil {
		err = rerr
	}
	if err == nil {
		err = merge(env.API.ValidateRequest(hreq, t.op, vars, query), extra)
	}
	if err == nil {
		if latency = env.Gate.Latency(t.op); latency > 0 {
			lctx, cancel := env.UntilStop(ctx)
			env.Sleep(lctx, latency)
			cancel()
		}
		if token := req.Params.GetProgressToken(); token != nil {
			hreq = hreq.WithContext(sim.WithProgress(hreq.Context(), progress(ctx, req.Session, token)))
		}
		status, body, err = ops.Run(t.op, &ops.Call{Env: env, Request: hreq, Principal: pass.Principal, Vars: vars, Query: query, View: c.view})
	}
	errCode := ""
	if err != nil {
		e := sim.AsError(err)
		if e.Kind == sim.EINTERNAL {
			f.logError("internal error", "tool", t.def.Name, "err", err)
		}
		errCode = e.Code
		status, body = wire.ErrorOf(err)
	}
	data := encode(body)
	if env.Strict {
		if verr := f.check(t, hreq, pass, status, data); verr != nil {
			f.logError("tool result breaks openapi.json", "tool", t.def.Name, "status", status, "err", verr)
			errCode, status = "response_validation_failed", http.StatusInternalServerError
			_, eb := wire.ErrorOf(&sim.Error{Kind: sim.EINTERNAL, Code: errCode,
				Message: "The mock's response breaks openapi.json (strict mode): " + verr.Error(),
				Details: map[string]any{"operation": t.op, "status": status}})
			data = encode(eb)
		}
	}
	res := result(t, status, data, errCode != "")
	// Bookkeeping: the coverage counts the call under its operation; the
	// journal records it with the HTTP request that carried it, or, over
	// stdio, as an entry of its own.
	env.Coverage.Hit("mcp", t.op, status)
	call := front.Call{Operation: t.op, Status: status, ErrorCode: errCode}
	if c.x != nil {
		c.x.note(call, latency)
	} else if env.Journal != nil {
		e := journal.Entry{ID: env.NewRequestID(), Time: sim.FormatTime(started), SimTime: sim.FormatTime(env.Eng.Clock().Now()),
			Front: "mcp", MCPMethod: "tools/call", Operation: t.op, Status: status, ErrorCode: errCode, WorkspaceID: pass.Principal.WorkspaceID,
			DurationMS: float64(env.WallClock().Sub(started).Microseconds()) / 1000, InjectedLatencyMS: latency.Milliseconds(),
			RequestContentType: "application/json", RequestBytes: int64(len(raw)), ResponseBytes: int64(len(data))}
		e.RequestBodyTruncated = len(raw) > env.Journal.BodyCap()
		e.ResponseBodyTruncated = len(data) > env.Journal.BodyCap()
		env.Journal.Add(e, raw, data)
	}
	return res
}

// request builds the operation's HTTP request from a tool's arguments:
// path parameters into the path, query parameters into the query string,
// the other arguments into the JSON body; so that openapi.json judges the
// arguments as it judges a REST request. It returns the violations only a
// tool can commit (a missing path parameter, an unknown argument of a tool
// without a body) for the caller to add to the contract's.
func (t *tool) request(ctx context.Context, raw json.RawMessage) (*http.Request, map[string]string, url.Values, []sim.Violation, error) {
	args := map[string]json.RawMessage{}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && string(trimmed) != "null" {
		if err := json.Unmarshal(trimmed, &args); err != nil {
			return stub(ctx, t.method), nil, nil, nil, sim.InvalidError([]sim.Violation{{In: "arguments", Reason: "the arguments must be a JSON object"}})
		}
	}
	var violations []sim.Violation
	vars := map[string]string{}
	path := t.path
	for _, name := range t.args.Path {
		v, ok := args[name]
		delete(args, name)
		if !ok || string(v) == "null" {
			violations = append(violations, sim.Violation{In: "path", Field: name, Reason: "is required"})
			v = json.RawMessage("1") // a valid stand-in: the violation says it all
		}
		vars[name] = text(v)
		path = strings.Replace(path, "{"+name+"}", url.PathEscape(vars[name]), 1)
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
		body, _ = json.Marshal(args) // sorted keys, values as sent
	case !t.args.Body:
		for _, name := range sortedKeys(args) {
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
		return stub(ctx, t.method), nil, nil, nil, sim.InvalidError([]sim.Violation{{In: "arguments", Reason: err.Error()}})
	}
	return r, vars, query, violations, nil
}

// merge adds a tool's own violations to the contract's verdict.
func merge(err error, extra []sim.Violation) error {
	if len(extra) == 0 {
		return err
	}
	if err == nil {
		return sim.InvalidError(extra)
	}
	if e := sim.AsError(err); e.Code == "validation_failed" {
		if v, ok := e.Details["violations"].([]sim.Violation); ok {
			return sim.InvalidError(append(append([]sim.Violation{}, v...), extra...))
		}
	}
	return err
}

// stub is a request for an operation whose arguments could not make one.
func stub(ctx context.Context, method string) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, method, "/", nil)
	return r
}

// text renders an argument as a parameter value: a string as itself,
// anything else as its JSON.
func text(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// encode renders a body as REST does (HTML characters not escaped), without
// the trailing newline.
func encode(v any) []byte {
	if raw, ok := v.(wire.RawJSON); ok { // a list page, already encoded
		return bytes.TrimSuffix(raw, []byte("\n"))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{"error":{"code":"internal_error","message":"Internal server error."}}`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// check validates a tool's result against the operation's response in
// openapi.json, with the headers REST would have sent.
func (f *Front) check(t *tool, r *http.Request, pass gate.Pass, status int, data []byte) error {
	h := http.Header{"Content-Type": {"application/json"}}
	if pass.Authenticated() {
		front.SetRateHeaders(h, pass.Rate)
		if status == http.StatusTooManyRequests {
			h.Set("Retry-After", strconv.Itoa(max(1, int(pass.Rate.RetryAfter/time.Second))))
		}
	}
	return f.env.API.ValidateResponse(r, t.op, status, h, data)
}

// result is a tool's answer: the operation's JSON as structured content and
// a short text; an error is a tool error carrying the spec's error object.
func result(t *tool, status int, data []byte, isError bool) *sdk.CallToolResult {
	d := digestOf(data)
	res := &sdk.CallToolResult{StructuredContent: json.RawMessage(data), IsError: isError,
		Content: []sdk.Content{&sdk.TextContent{Text: summarize(t, status, d)}}}
	if !isError {
		res.Content = append(res.Content, assetLinks(d)...)
	}
	return res
}

// progress reports the statuses a long poll reads as MCP progress
// notifications: queued 0, processing 1, final 2 of 2, each once.
func progress(ctx context.Context, ss *sdk.ServerSession, token any) func(string) {
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
		_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 2, Message: status})
	}
}
