package mcp

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/refdoc"
	"github.com/mediamock/mediamock/spec"
)

// TestControlMCPToolsReference holds docs/reference/control-mcp-tools.md
// to the tools the control MCP server builds from control.json, to its
// resources and its prompts. `go test ./internal/mcp -run
// TestControlMCPToolsReference -update-docs` rewrites it.
func TestControlMCPToolsReference(t *testing.T) {
	doc, err := contract.ParseEmbedded("control.json", spec.Control)
	require.NoError(t, err)
	tools, err := controlTools(doc, "/_mock")
	require.NoError(t, err)
	require.NotEmpty(t, tools)
	refdoc.Check(t, "../../docs/reference/control-mcp-tools.md", controlReference(doc, tools), *updateDocs,
		"go test ./internal/mcp -run TestControlMCPToolsReference -update-docs")
}

// controlReference is the reference of the control MCP server: its
// instructions, every tool, what is left out and why, its resources and
// its prompts.
func controlReference(doc *contract.Contract, tools []*tool) []byte {
	p := refdoc.New("Control MCP tools reference", "the control MCP server's tools, built from the operations of `control.json` (`internal/mcp`, `internal/contract`),",
		"go test ./internal/mcp -run TestControlMCPToolsReference -update-docs")
	p.Para(fmt.Sprintf("The control MCP server (`%s`, %q) is served over Streamable HTTP at `%s`, beside the control API, and over stdio by "+
		"`mockserver mcp --control`; it is never mixed into the service's `/mcp`. It offers one tool per operation of `control.json`, "+
		"named after its operationId in snake case, in the document's order (see [Control API](control-api.md)). A tool call is a request to the control API, "+
		"made in process with the caller's credential: the same guard, scope, validation against `control.json`, handler and answer. "+
		"Its result carries the control API's JSON as text and as structured content; an answer that is not a success is a tool error carrying the control API's error object. "+
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

	var left []string
	for _, op := range doc.Operations() {
		if !ControlToolable(doc, op.ID) {
			left = append(left, "`"+op.ID+"` (`"+op.Method+" /_mock"+op.Path+"`)")
		}
	}
	p.Para("Left out, since no tool result carries what they move (an event stream as it comes, a binary state of up to gigabytes, the Prometheus text a scraper reads): " +
		joinList(left) + ". Read them from the control API itself.")

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
		rows = append(rows, []string{"`" + cp.prompt.Name + "`", cp.prompt.Title, joinList(args), cp.prompt.Description})
	}
	p.Table([]string{"prompt", "title", "arguments", "description"}, rows)
	return p.Bytes()
}

// joinList joins items with commas.
func joinList(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
