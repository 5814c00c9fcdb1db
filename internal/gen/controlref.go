package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/refdoc"
)

// controlReference is the control API's reference,
// docs/reference/control-api.md: every operation of control.json (c),
// grouped by tag in the document's order, then the schemas. It reads the
// document alone, so it lives here rather than in the control front.
func controlReference(c *contract.Contract) ([]byte, error) {
	ops := c.Operations()
	if len(ops) == 0 {
		return nil, fmt.Errorf("control.json has no operations")
	}
	doc := c.Route(ops[0].ID).Spec
	base := ""
	if len(doc.Servers) > 0 {
		base = doc.Servers[0].URL
	}
	p := refdoc.New("Control API reference", "`control.json` (`spec/control.json`)", refdoc.Command)
	p.Para(doc.Info.Description)
	p.Para(fmt.Sprintf("The document itself is served at `GET %s/openapi.json`. Every path below includes the prefix `%s`. "+
		"What each fault kind does, its stage and parameters: [Fault kinds](fault-kinds.md).", base, base))
	if ss := doc.Components.SecuritySchemes; ss != nil {
		for _, name := range slices.Sorted(maps.Keys(ss)) {
			if s := ss[name].Value; s != nil {
				p.Para(fmt.Sprintf("Authentication (`%s`, %s %s): %s", name, s.Type, s.Scheme, s.Description))
			}
		}
	}

	byTag := map[string][]contract.Operation{}
	var tags []string
	for _, t := range doc.Tags {
		tags = append(tags, t.Name)
	}
	for _, o := range ops {
		tag := "Other"
		if t := c.Route(o.ID).Operation.Tags; len(t) > 0 {
			tag = t[0]
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
		byTag[tag] = append(byTag[tag], o)
	}

	p.Heading(2, "Endpoints")
	var rows [][]string
	for _, tag := range tags {
		for _, o := range byTag[tag] {
			r := c.Route(o.ID)
			rows = append(rows, []string{tag, "[`" + o.Method + " " + base + o.Path + "`](#" + refdoc.Slug(o.Method+" "+base+o.Path) + ")",
				r.Operation.Summary, refdoc.Code(sandboxReach(r.Operation))})
		}
	}
	p.Table([]string{"tag", "endpoint", "summary", "sandbox token"}, rows)

	used := map[string]bool{}
	inline := map[string][]string{} // request body schemas, shown with their endpoints
	for _, tag := range tags {
		if len(byTag[tag]) == 0 {
			continue
		}
		p.Heading(2, tag)
		if t := doc.Tags.Get(tag); t != nil {
			p.Para(t.Description)
		}
		for _, o := range byTag[tag] {
			r := c.Route(o.ID)
			op := r.Operation
			p.Heading(3, "`"+o.Method+" "+base+o.Path+"`")
			p.Para("**" + op.Summary + "** (`" + o.ID + "`)")
			p.Para(op.Description)
			var facts []string
			if v := reach(op); v != "" {
				facts = append(facts, "Sandbox token: "+v+".")
			}
			if orig := doc.Paths.Find(r.Path).GetOperation(r.Method); orig != nil && orig.Security != nil && open(*orig.Security) {
				facts = append(facts, "Authentication: none (it answers without a control token).")
			}
			p.List(facts)

			var params openapi3.Parameters
			params = append(params, r.PathItem.Parameters...)
			params = append(params, op.Parameters...)
			if len(params) > 0 {
				rows = nil
				for _, pr := range params {
					v := pr.Value
					req := ""
					if v.Required {
						req = "yes"
					}
					rows = append(rows, []string{"`" + v.Name + "`", v.In, typeOf(v.Schema, used), req, v.Description})
				}
				p.Para("Parameters:")
				p.Table([]string{"name", "in", "type", "required", "description"}, rows)
			}

			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				body := rb.Value
				for _, ct := range slices.Sorted(maps.Keys(body.Content)) {
					s := body.Content[ct].Schema
					need := "optional"
					if body.Required {
						need = "required"
					}
					p.Para(fmt.Sprintf("Request body (%s, `%s`): %s.", need, ct, typeOf(s, used)))
					if s != nil && s.Value != nil && len(s.Value.Properties) > 0 {
						if s.Ref != "" {
							inline[refName(s.Ref)] = append(inline[refName(s.Ref)], o.Method+" "+base+o.Path)
						}
						p.Para(s.Value.Description)
						p.Table([]string{"field", "type", "required", "description"}, fieldRows(s.Value, used))
						if rule := oneOfRule(s.Value); rule != "" {
							p.Para(rule)
						}
					}
				}
			}

			rows = nil
			for _, code := range sortedCodes(op.Responses.Map()) {
				resp := op.Responses.Value(code).Value
				var bodies []string
				for _, ct := range slices.Sorted(maps.Keys(resp.Content)) {
					bodies = append(bodies, typeOf(resp.Content[ct].Schema, used)+" (`"+ct+"`)")
				}
				desc := ""
				if resp.Description != nil {
					desc = *resp.Description
				}
				rows = append(rows, []string{code, desc, strings.Join(bodies, "<br>")})
			}
			p.Para("Responses:")
			p.Table([]string{"status", "description", "body"}, rows)
		}
	}

	p.Heading(2, "Schemas")
	p.Para("The schemas the endpoints above take and return, by name.")
	// Schemas reached from the endpoints, and those reached from them.
	for seen := 0; seen != len(used); {
		seen = len(used)
		for _, name := range slices.Sorted(maps.Keys(used)) {
			if s := doc.Components.Schemas[name]; s != nil && s.Value != nil {
				fieldRows(s.Value, used)
				typeOf(&openapi3.SchemaRef{Value: s.Value}, used)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(used)) {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			continue
		}
		p.Heading(3, "Schema `"+name+"`")
		p.Para(s.Value.Description)
		if at := inline[name]; len(at) > 0 {
			var links []string
			for _, e := range at {
				links = append(links, "[`"+e+"`](#"+refdoc.Slug(e)+")")
			}
			p.Para("The request body of " + strings.Join(links, ", ") + ": its fields are listed there.")
			continue
		}
		if len(s.Value.Properties) > 0 {
			p.Table([]string{"field", "type", "required", "description"}, fieldRows(s.Value, used))
			if rule := oneOfRule(s.Value); rule != "" {
				p.Para(rule)
			}
		} else {
			p.Para("Type: " + typeOf(&openapi3.SchemaRef{Value: s.Value}, used) + ".")
		}
	}
	return p.Bytes(), nil
}

// reach is how a sandbox's control token reaches an operation
// (x-sandbox), said in words.
func reach(op *openapi3.Operation) string {
	v := sandboxReach(op)
	switch v {
	case "scoped":
		return "`scoped`: it takes `?sandbox=` or `?workspace_id=`; a sandbox's token scopes it to the sandbox"
	case "own":
		return "`own`: a sandbox's token reaches its own records only"
	case "shared":
		return "`shared`: refused to a sandbox's token (403)"
	case "":
		return ""
	}
	return "`" + v + "`"
}

// sandboxReach is an operation's x-sandbox.
func sandboxReach(op *openapi3.Operation) string {
	v, _ := op.Extensions["x-sandbox"].(string)
	return v
}

// open reports whether a security requirement lets a request without
// credentials in.
func open(reqs openapi3.SecurityRequirements) bool {
	if len(reqs) == 0 {
		return true
	}
	for _, r := range reqs {
		if len(r) == 0 {
			return true
		}
	}
	return false
}

// fieldRows are an object schema's fields, by name, each with its type,
// whether it is required and its description.
func fieldRows(s *openapi3.Schema, used map[string]bool) [][]string {
	var rows [][]string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		f := s.Properties[name]
		req := ""
		if slices.Contains(s.Required, name) {
			req = "yes"
		}
		desc := ""
		if f.Value != nil {
			desc = f.Value.Description
			if desc == "" && f.Ref != "" {
				desc = "See [`" + refName(f.Ref) + "`](#" + refdoc.Slug("Schema "+refName(f.Ref)) + ")."
			}
		}
		rows = append(rows, []string{"`" + name + "`", typeOf(f, used), req, desc})
	}
	return rows
}

// oneOfRule says which fields of an object go together, from its oneOf
// of required lists.
func oneOfRule(s *openapi3.Schema) string {
	var alts []string
	for _, o := range s.OneOf {
		if o.Value == nil || len(o.Value.Required) == 0 || o.Ref != "" {
			return ""
		}
		alts = append(alts, "`"+strings.Join(o.Value.Required, "`, `")+"`")
	}
	if len(alts) == 0 {
		return ""
	}
	return "Exactly one of: " + strings.Join(alts, "; ") + "."
}

// typeOf summarizes a schema in a few words: a named schema links to its
// section (and is noted in used), an array says its items, a scalar its
// format, enum, bounds and default.
func typeOf(ref *openapi3.SchemaRef, used map[string]bool) string {
	if ref == nil || ref.Value == nil {
		return "any"
	}
	if ref.Ref != "" && strings.HasPrefix(ref.Ref, "#/components/schemas/") {
		name := refName(ref.Ref)
		used[name] = true
		return "[`" + name + "`](#" + refdoc.Slug("Schema "+name) + ")"
	}
	s := ref.Value
	if len(s.OneOf) > 0 && len(s.Properties) == 0 {
		var alts []string
		for _, o := range s.OneOf {
			alts = append(alts, typeOf(o, used))
		}
		return "one of " + strings.Join(alts, ", ")
	}
	if len(s.AllOf) == 1 && len(s.Properties) == 0 {
		return typeOf(s.AllOf[0], used)
	}
	t := strings.Join(s.Type.Slice(), " or ")
	if t == "" {
		t = "any"
	}
	if t == "array" {
		return "array of " + typeOf(s.Items, used)
	}
	var notes []string
	if s.Format != "" {
		notes = append(notes, s.Format)
	}
	if len(s.Enum) > 0 {
		var vals []string
		for _, v := range s.Enum {
			vals = append(vals, refdoc.Code(fmt.Sprint(v)))
		}
		notes = append(notes, "one of "+strings.Join(vals, ", "))
	}
	switch {
	case s.Min != nil && s.Max != nil:
		notes = append(notes, num(*s.Min)+" to "+num(*s.Max))
	case s.Min != nil:
		notes = append(notes, "at least "+num(*s.Min))
	case s.Max != nil:
		notes = append(notes, "at most "+num(*s.Max))
	}
	if s.MaxLength != nil {
		notes = append(notes, "at most "+strconv.FormatUint(*s.MaxLength, 10)+" characters")
	}
	if s.Pattern != "" {
		notes = append(notes, "pattern "+refdoc.Code(s.Pattern))
	}
	if s.Default != nil {
		notes = append(notes, "default "+refdoc.Code(fmt.Sprint(s.Default)))
	}
	if s.Nullable {
		notes = append(notes, "nullable")
	}
	if len(notes) == 0 {
		return t
	}
	return t + " (" + strings.Join(notes, "; ") + ")"
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// sortedCodes are response codes in order: numbers first, then default.
func sortedCodes[V any](m map[string]V) []string {
	codes := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(codes, func(a, b string) int {
		_, ea := strconv.Atoi(a)
		_, eb := strconv.Atoi(b)
		switch {
		case ea == nil && eb != nil:
			return -1
		case ea != nil && eb == nil:
			return 1
		}
		return 0
	})
	return codes
}
