package contract

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Arguments describes an operation's inputs as one JSON object, the way a
// tool takes them: its path and query parameters and the properties of its
// JSON request body, merged. Schema is a JSON Schema of that object derived
// from the document, so that a rule is written once, in openapi.json.
type Arguments struct {
	Schema map[string]any
	// Path and Query name the arguments that are path and query parameters.
	Path, Query []string
	// Body reports whether the operation takes a JSON body: the arguments
	// that are not parameters are its properties. BodyRequired reports
	// whether the body is required (or optional as a whole).
	Body, BodyRequired bool
}

// Arguments derives the arguments of an operation. A body schema's
// top-level oneOf (exactly one of some properties) is left out of Schema,
// which many tool clients refuse, and said in its description instead; the
// rule still holds, since requests are validated against the document.
func (c *Contract) Arguments(opID string) (Arguments, error) {
	r := c.routes[opID]
	if r == nil {
		return Arguments{}, fmt.Errorf("no operation %s", opID)
	}
	props := map[string]any{}
	var required []string
	var out Arguments
	add := func(name string, schema map[string]any, req bool) error {
		if _, dup := props[name]; dup {
			return fmt.Errorf("%s: argument %s is both a parameter and a body property", opID, name)
		}
		props[name] = schema
		if req {
			required = append(required, name)
		}
		return nil
	}
	params := append(append(openapi3.Parameters{}, r.PathItem.Parameters...), r.Operation.Parameters...)
	for _, ref := range params {
		p := ref.Value
		if p == nil || p.Schema == nil || (p.In != openapi3.ParameterInPath && p.In != openapi3.ParameterInQuery) {
			continue
		}
		s := jsonSchema(p.Schema.Value)
		if p.Description != "" {
			s["description"] = p.Description
		}
		if err := add(p.Name, s, p.Required); err != nil {
			return Arguments{}, err
		}
		if p.In == openapi3.ParameterInPath {
			out.Path = append(out.Path, p.Name)
		} else {
			out.Query = append(out.Query, p.Name)
		}
	}
	var notes []string
	if rb := r.Operation.RequestBody; rb != nil && rb.Value != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			out.Body, out.BodyRequired = true, rb.Value.Required
			body := mt.Schema.Value
			for _, name := range slices.Sorted(maps.Keys(body.Properties)) {
				if err := add(name, jsonSchema(body.Properties[name].Value), slices.Contains(body.Required, name)); err != nil {
					return Arguments{}, err
				}
			}
			if msg, ok := body.Extensions["x-one-of-message"].(string); ok && len(body.OneOf) > 0 {
				notes = append(notes, strings.ToUpper(msg[:1])+msg[1:]+".")
			}
		}
	}
	out.Schema = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out.Schema["required"] = required
	}
	if len(notes) > 0 {
		out.Schema["description"] = strings.Join(notes, " ")
	}
	return out, nil
}

// Describe is an operation's summary and description.
func (c *Contract) Describe(opID string) (summary, description string) {
	r := c.routes[opID]
	if r == nil {
		return "", ""
	}
	return r.Operation.Summary, r.Operation.Description
}

// jsonSchema renders an OpenAPI 3.0 schema as a self-contained JSON Schema:
// references are inlined, nullable becomes a null type, an example becomes
// examples, and the OpenAPI-only integer formats are left out.
func jsonSchema(s *openapi3.Schema) map[string]any {
	out := map[string]any{}
	if s == nil {
		return out
	}
	if s.Type != nil {
		types := s.Type.Slice()
		if s.Nullable {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = types
		}
	}
	set := func(key string, v any, ok bool) {
		if ok {
			out[key] = v
		}
	}
	set("title", s.Title, s.Title != "")
	set("description", s.Description, s.Description != "")
	set("format", s.Format, s.Format != "" && s.Format != "int32" && s.Format != "int64")
	set("enum", s.Enum, len(s.Enum) > 0)
	set("const", s.Const, s.Const != nil)
	set("default", s.Default, s.Default != nil)
	set("examples", []any{s.Example}, s.Example != nil)
	if s.Min != nil {
		if s.ExclusiveMin.IsTrue() {
			out["exclusiveMinimum"] = *s.Min
		} else {
			out["minimum"] = *s.Min
		}
	}
	if s.Max != nil {
		if s.ExclusiveMax.IsTrue() {
			out["exclusiveMaximum"] = *s.Max
		} else {
			out["maximum"] = *s.Max
		}
	}
	if s.MultipleOf != nil {
		out["multipleOf"] = *s.MultipleOf
	}
	set("minLength", s.MinLength, s.MinLength > 0)
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	set("pattern", s.Pattern, s.Pattern != "")
	set("minItems", s.MinItems, s.MinItems > 0)
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	set("uniqueItems", true, s.UniqueItems)
	if s.Items != nil {
		out["items"] = jsonSchema(s.Items.Value)
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		for name, p := range s.Properties {
			props[name] = jsonSchema(p.Value)
		}
		out["properties"] = props
	}
	set("required", s.Required, len(s.Required) > 0)
	if ap := s.AdditionalProperties; ap.Has != nil {
		out["additionalProperties"] = *ap.Has
	} else if ap.Schema != nil {
		out["additionalProperties"] = jsonSchema(ap.Schema.Value)
	}
	for key, refs := range map[string]openapi3.SchemaRefs{"oneOf": s.OneOf, "anyOf": s.AnyOf, "allOf": s.AllOf} {
		if len(refs) > 0 {
			list := make([]any, len(refs))
			for i, r := range refs {
				list[i] = jsonSchema(r.Value)
			}
			out[key] = list
		}
	}
	if s.Not != nil {
		out["not"] = jsonSchema(s.Not.Value)
	}
	return out
}
