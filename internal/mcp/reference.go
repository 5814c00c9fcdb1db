package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/refdoc"
)

// ToolsReference is the reference of the MCP server,
// docs/reference/mcp-tools.md: its instructions, every tool it builds
// from api (the rows tools/list answers with) and its resources.
func ToolsReference(api *contract.Contract) ([]byte, error) {
	tools, err := buildTools(api)
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, errors.New("openapi.json makes no MCP tool")
	}
	p := refdoc.New("MCP tools reference", "the MCP server's tools, built from the operations of `openapi.json` (`internal/mcp`, `internal/contract`),", refdoc.Command)
	p.Para(fmt.Sprintf("The service's MCP server (`%s`, %q) is served over Streamable HTTP at `%s` on the REST API's listener, "+
		"and over stdio by `mockserver mcp`. It offers one tool per operation of `openapi.json` that names one (`x-mcp-tool`), "+
		"listed here in the document's order (see [REST operations](operations.md)); `tools/list` lists them in the order of their names. It offers the resources below too. A tool call is a call of its operation: the same authentication, "+
		"rate window, scope, validation against `openapi.json`, handler and answer as the REST request; its result carries the "+
		"operation's JSON as structured content, and an error is a tool error carrying the error object.",
		Implementation.Name, Implementation.Title, Path))
	p.Para("The server's instructions to clients:")
	p.Para("> " + instructions)

	var rows [][]string
	for _, t := range tools {
		op, _ := api.Operation(t.op)
		rows = append(rows, []string{"[`" + t.def.Name + "`](#" + refdoc.Slug(t.def.Name) + ")", t.def.Title,
			"`" + t.method + " " + t.path + "`", refdoc.Code(op.Scope), hints(t)})
	}
	p.Table([]string{"tool", "title", "operation", "scope", "annotations"}, rows)

	p.Heading(2, "Tools")
	for _, t := range tools {
		if schema := toolSection(p, t, "Arguments (the input schema's properties; no others are accepted):"); schema != nil {
			if d, _ := schema["description"].(string); d != "" {
				p.Para(d)
			}
		}
	}

	p.Heading(2, "Resources")
	p.Para(fmt.Sprintf("Reading a resource needs the `%s` scope and counts once against the rate window, as a tool call does.", resourceScope))
	p.Table([]string{"URI", "name", "title", "media type", "description"}, [][]string{
		{"`" + modelsResource.URI + "`", modelsResource.Name, modelsResource.Title, refdoc.Code(modelsResource.MIMEType), modelsResource.Description},
		{"`" + assetTemplate.URITemplate + "` (template)", assetTemplate.Name, assetTemplate.Title, "the asset's", assetTemplate.Description},
	})
	return p.Bytes(), nil
}

// hints are a tool's annotations in short.
func hints(t *tool) string {
	a := t.def.Annotations
	var out []string
	if a.ReadOnlyHint {
		out = append(out, "read-only")
	}
	if a.IdempotentHint {
		out = append(out, "idempotent")
	}
	if a.DestructiveHint != nil && *a.DestructiveHint {
		out = append(out, "destructive")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		out = append(out, "open world")
	}
	return strings.Join(out, ", ")
}

func boolp(b *bool) string {
	if b == nil {
		return "unset"
	}
	return strconv.FormatBool(*b)
}

// argOrder lists a tool's arguments: path parameters, query parameters,
// then the body's properties by name.
func argOrder(t *tool, props map[string]any) []string {
	out := append(slices.Clone(t.args.Path), t.args.Query...)
	var body []string
	for name := range props {
		if !slices.Contains(out, name) {
			body = append(body, name)
		}
	}
	slices.Sort(body)
	return append(out, body...)
}

// schemaText says a JSON schema's type in a few words: its type, format,
// enum, bounds and default.
func schemaText(s map[string]any) string {
	t := typeName(s["type"])
	if t == "array" {
		items, _ := s["items"].(map[string]any)
		return "array of " + schemaText(items)
	}
	if t == "" {
		if alts, ok := s["oneOf"].([]any); ok {
			var names []string
			for _, a := range alts {
				m, _ := a.(map[string]any)
				names = append(names, schemaText(m))
			}
			return "one of " + strings.Join(names, ", ")
		}
		t = "any"
	}
	var notes []string
	if f, ok := s["format"].(string); ok {
		notes = append(notes, f)
	}
	if e, ok := s["enum"].([]any); ok {
		var vals []string
		for _, v := range e {
			if v != nil {
				vals = append(vals, refdoc.Code(jsonText(v)))
			}
		}
		notes = append(notes, "one of "+strings.Join(vals, ", "))
	}
	lo, hasLo := s["minimum"]
	hi, hasHi := s["maximum"]
	switch {
	case hasLo && hasHi:
		notes = append(notes, jsonText(lo)+" to "+jsonText(hi))
	case hasLo:
		notes = append(notes, "at least "+jsonText(lo))
	case hasHi:
		notes = append(notes, "at most "+jsonText(hi))
	}
	if n, ok := s["maxLength"]; ok {
		notes = append(notes, "at most "+jsonText(n)+" characters")
	}
	if n, ok := s["maxItems"]; ok {
		notes = append(notes, "at most "+jsonText(n)+" items")
	}
	if d, ok := s["default"]; ok {
		notes = append(notes, "default "+refdoc.Code(jsonText(d)))
	}
	if len(notes) == 0 {
		return t
	}
	return t + " (" + strings.Join(notes, "; ") + ")"
}

// typeName is a JSON schema's type: one name, or several ("string or
// null").
func typeName(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []string:
		return strings.Join(t, " or ")
	case []any:
		var names []string
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
		return strings.Join(names, " or ")
	}
	return ""
}

func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// toolSection writes a tool's part of a reference page, for both MCP
// servers: its heading, what it calls, its description, its annotations
// and its arguments' table, introduced by intro. It returns the tool's
// input schema, nil when the tool takes no arguments.
func toolSection(p *refdoc.Page, t *tool, intro string) map[string]any {
	p.Heading(3, t.def.Name)
	p.Para(fmt.Sprintf("**%s**: `%s %s` (`%s`).", t.def.Title, t.method, t.path, t.op))
	p.Para(t.def.Description)
	a := t.def.Annotations
	p.List([]string{
		fmt.Sprintf("Annotations: `readOnlyHint` %v, `idempotentHint` %v, `destructiveHint` %s, `openWorldHint` %s.",
			a.ReadOnlyHint, a.IdempotentHint, boolp(a.DestructiveHint), boolp(a.OpenWorldHint)),
	})
	schema := t.def.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		p.Para("It takes no arguments.")
		return nil
	}
	required, _ := schema["required"].([]string)
	var rows [][]string
	for _, name := range argOrder(t, props) {
		s, _ := props[name].(map[string]any)
		in := "body"
		switch {
		case slices.Contains(t.args.Path, name):
			in = "path"
		case slices.Contains(t.args.Query, name):
			in = "query"
		}
		req := ""
		if slices.Contains(required, name) {
			req = "yes"
		}
		desc, _ := s["description"].(string)
		rows = append(rows, []string{"`" + name + "`", in, schemaText(s), req, desc})
	}
	p.Para(intro)
	p.Table([]string{"argument", "sent as", "type", "required", "description"}, rows)
	return schema
}

// ControlToolsReference is the reference of the control MCP server,
// docs/reference/control-mcp-tools.md: its instructions, every tool it
// builds from doc (control.json), what is left out and why, its resources
// and its prompts.
func ControlToolsReference(doc *contract.Contract) ([]byte, error) {
	tools, err := controlTools(doc, "/_mock")
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, errors.New("control.json makes no MCP tool")
	}
	p := refdoc.New("Control MCP tools reference", "the control MCP server's tools, built from the operations of `control.json` (`internal/mcp`, `internal/contract`, `internal/controlplane`),", refdoc.Command)
	p.Para(fmt.Sprintf("The control MCP server (`%s`, %q) is served over Streamable HTTP at `%s`, beside the control API, and over stdio by "+
		"`mockserver mcp --control`; it is never mixed into the service's `/mcp`. It offers one tool per operation of `control.json`, "+
		"named after its operationId in snake case, listed here in the document's order (see [Control API](control-api.md)); `tools/list` lists them in the order of their names. A tool call is a call of the control plane's operation, "+
		"with the caller's credential: the same guard, scope, validation against `control.json`, handler and answer as the control API's. "+
		"Its result carries the control API's JSON as text and as structured content (an object as it is; an array, such as `list_workspaces`'s, "+
		"in an object as its `"+ArrayKey+"`: MCP's structured content is an object; decision D-49); an answer that is not a success is a tool error carrying the control API's error object. "+
		"Nothing it does counts against a workspace's rate limit, and its requests stay out of the journal. "+
		"How to configure it in an agent: [Steer the mock from an agent](../how-to/steer-from-an-agent.md).",
		ControlImplementation.Name, ControlImplementation.Title, ControlPath))
	p.Para("The server's instructions to clients:")
	p.Para("> " + controlInstructions)

	var rows [][]string
	for _, t := range tools {
		rows = append(rows, []string{"[`" + t.def.Name + "`](#" + refdoc.Slug(t.def.Name) + ")", t.def.Title,
			"`" + t.method + " " + t.path + "`", hints(t)})
	}
	p.Table([]string{"tool", "title", "operation", "annotations"}, rows)

	rows = nil
	for _, op := range doc.Operations() {
		if !ControlToolable(doc, op.ID) {
			reason, _ := doc.Extension(op.ID, "x-mcp-no-tool")
			rows = append(rows, []string{"`" + op.ID + "`", "`" + op.Method + " /_mock" + op.Path + "`", fmt.Sprint(reason)})
		}
	}
	p.Para("Every other operation is a tool. These are not, each for the reason `control.json` gives (`x-mcp-no-tool`); read them from the control API itself:")
	p.Table([]string{"operation", "endpoint", "why it is no tool"}, rows)

	p.Heading(2, "Tools")
	for _, t := range tools {
		toolSection(p, t, "Arguments (the input schema's properties):")
	}

	p.Heading(2, "Resources")
	p.Para("Each is the answer of a control API read, in the caller's scope (a sandbox's own with its control token).")
	rows = nil
	for _, r := range controlResources {
		rows = append(rows, []string{"`" + r.res.URI + "`", r.res.Name, r.res.Title, refdoc.Code(r.res.MIMEType), r.res.Description})
	}
	p.Table([]string{"URI", "name", "title", "media type", "description"}, rows)

	p.Heading(2, "Prompts")
	p.Para("Each expands to the tool calls of a rehearsal, in order, for the agent to make.")
	rows = nil
	for _, cp := range controlPrompts {
		var args []string
		for _, a := range cp.prompt.Arguments {
			args = append(args, "`"+a.Name+"`")
		}
		rows = append(rows, []string{"`" + cp.prompt.Name + "`", cp.prompt.Title, strings.Join(args, ", "), cp.prompt.Description})
	}
	p.Table([]string{"prompt", "title", "arguments", "description"}, rows)
	return p.Bytes(), nil
}
