package contract

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mediamock/mediamock/internal/refdoc"
)

// OperationsReference is the reference of the REST operations,
// docs/reference/operations.md: every operation of the service's
// document, grouped by tag in the document's order, with the facts the
// fronts read from it (Operations).
func OperationsReference(c *Contract) []byte {
	doc := c.doc
	base := ""
	if len(doc.Servers) > 0 {
		base = doc.Servers[0].URL
	}
	p := refdoc.New("REST operations", "the operations of `openapi.json` (`spec/openapi.json`)", refdoc.Command)
	p.Para(fmt.Sprintf("Every operation of the service's REST API v1 (%s %s), grouped by tag. Paths are relative to the base address `%s`; "+
		"the document itself is served at `%s/openapi.json`. Each operation names the scope it needs (`x-required-scope`) "+
		"and, when it is also an MCP tool, the tool (`x-mcp-tool`, see [MCP tools](mcp-tools.md)).", doc.Info.Title, doc.Info.Version, base, base))
	if ss := doc.Components.SecuritySchemes; ss != nil {
		for _, name := range slices.Sorted(maps.Keys(ss)) {
			if s := ss[name].Value; s != nil && s.Description != "" {
				p.Para(fmt.Sprintf("Authentication (`%s`): %s", name, s.Description))
			}
		}
	}
	p.Para("Rate limit: every authenticated operation counts once against its workspace's window (per minute, shared with the MCP server's tool calls); " +
		"the document names no other class. An operation without security is not rate limited.")

	byTag := map[string][]Operation{}
	var tags []string
	for _, t := range doc.Tags {
		tags = append(tags, t.Name)
	}
	for _, o := range c.Operations() {
		tag := "Other"
		if t := c.Route(o.ID).Operation.Tags; len(t) > 0 {
			tag = t[0]
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
		byTag[tag] = append(byTag[tag], o)
	}
	for _, tag := range tags {
		if len(byTag[tag]) == 0 {
			continue
		}
		p.Heading(2, tag)
		if t := doc.Tags.Get(tag); t != nil {
			p.Para(t.Description)
		}
		var rows [][]string
		for _, o := range byTag[tag] {
			r := c.Route(o.ID)
			scope, rate := refdoc.Code(o.Scope), "workspace window"
			if orig := doc.Paths.Find(r.Path).GetOperation(r.Method); orig != nil && orig.Security != nil && len(*orig.Security) == 0 {
				scope, rate = "none", "not limited"
			}
			rows = append(rows, []string{"`" + o.Method + " " + o.Path + "`", "`" + o.ID + "`", r.Operation.Summary, scope,
				rate, refdoc.Code(o.Tool), statuses(c, o.ID), strings.Join(traits(o), ", ")})
		}
		p.Table([]string{"operation", "operationId", "summary", "scope", "rate limit", "MCP tool", "statuses", "notes"}, rows)
	}
	return p.Bytes()
}

// traits are what openapi.json's extensions say of an operation beyond
// its scope.
func traits(o Operation) []string {
	var out []string
	if o.SpendsCredits {
		out = append(out, "spends credits")
	}
	if o.Destructive {
		out = append(out, "cannot be taken back")
	}
	if o.OpenWorld {
		out = append(out, "reaches beyond the service")
	}
	if o.NewestFirst {
		out = append(out, "newest first")
	}
	return out
}

// statuses are the statuses the document lets an operation answer.
func statuses(c *Contract, opID string) string {
	var out []string
	for _, code := range slices.Sorted(slices.Values(c.Statuses(opID))) {
		out = append(out, fmt.Sprint(code))
	}
	return strings.Join(out, ", ")
}
