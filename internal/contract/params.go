package contract

import (
	"fmt"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// The parameters of an operation, judged as kin-openapi's request
// validator judges them: parsed from their strings as their schemas say.

// paramRule is one parameter of an operation.
type paramRule struct {
	p      *openapi3.Parameter
	schema *openapi3.Schema // nil: nothing to check
}

func newParamRule(p *openapi3.Parameter) (paramRule, error) {
	rule := paramRule{p: p}
	if p.Schema == nil && p.Content == nil {
		return rule, nil // nothing to check, as kin-openapi checks nothing
	}
	unsupported := func(why string) (paramRule, error) {
		return rule, fmt.Errorf("parameter %s in %s: %s, which the validator does not take", p.Name, p.In, why)
	}
	if p.Content != nil {
		return unsupported("content")
	}
	if p.In != openapi3.ParameterInPath && p.In != openapi3.ParameterInQuery {
		return unsupported("a parameter in " + p.In)
	}
	sm, err := p.SerializationMethod()
	if err != nil {
		return rule, err
	}
	if p.In == openapi3.ParameterInPath && sm.Style != openapi3.SerializationSimple || p.In == openapi3.ParameterInQuery && sm.Style != openapi3.SerializationForm {
		return unsupported("style " + sm.Style)
	}
	s := p.Schema.Value
	if s == nil || s.Type == nil || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil {
		return unsupported("a schema that is not of a type")
	}
	for _, t := range s.Type.Slice() {
		switch t {
		case openapi3.TypeInteger, openapi3.TypeNumber, openapi3.TypeBoolean, openapi3.TypeString:
		default:
			return unsupported("type " + t)
		}
	}
	rule.schema = s
	return rule, nil
}

// check judges one parameter as openapi3filter.ValidateParameter does.
func (r *paramRule) check(in *Input, opts []openapi3.SchemaValidationOption) error {
	if r.schema == nil {
		return nil
	}
	p := r.p
	var value any
	var found bool
	var err error
	switch p.In {
	case openapi3.ParameterInPath:
		if raw, ok := in.Path[p.Name]; ok && raw != "" {
			found = true
			value, err = parsePrimitive(raw, r.schema)
		}
	case openapi3.ParameterInQuery:
		if len(in.Query) > 0 {
			values, ok := in.Query[p.Name]
			found = ok
			if len(values) > 0 {
				// The first value that is not empty, as kin-openapi
				// takes it (a leading empty one does not hide the next).
				raw := values[0]
				for _, v := range values[1:] {
					if raw != "" {
						break
					}
					raw = v
				}
				value, err = parsePrimitive(raw, r.schema)
			}
		}
	}
	if err != nil {
		return &openapi3filter.RequestError{Parameter: p, Err: err}
	}
	if p.Required && !found {
		return &openapi3filter.RequestError{Parameter: p, Reason: openapi3filter.ErrInvalidRequired.Error(), Err: openapi3filter.ErrInvalidRequired}
	}
	if value == nil {
		if !p.AllowEmptyValue && found {
			return &openapi3filter.RequestError{Parameter: p, Reason: openapi3filter.ErrInvalidEmptyValue.Error(), Err: openapi3filter.ErrInvalidEmptyValue}
		}
		return nil
	}
	if s, ok := value.(string); ok && s == "" && p.AllowEmptyValue {
		return nil
	}
	if err := r.schema.VisitJSON(value, opts...); err != nil {
		return &openapi3filter.RequestError{Parameter: p, Err: err}
	}
	return nil
}

// parsePrimitive parses a parameter's string as its schema's types say,
// the first that parses: an empty string is no value but for a string.
func parsePrimitive(raw string, s *openapi3.Schema) (v any, err error) {
	for _, typ := range s.Type.Slice() {
		if raw == "" && typ != openapi3.TypeString {
			return nil, nil
		}
		if v, err = parsePrimitiveCase(raw, s, typ); err == nil {
			return v, nil
		}
	}
	return v, err
}

func parsePrimitiveCase(raw string, s *openapi3.Schema, typ string) (any, error) {
	invalid := func(err error) error {
		return &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Value: raw, Reason: "an invalid " + typ, Cause: err.(*strconv.NumError).Err}
	}
	switch typ {
	case openapi3.TypeInteger:
		if s.Format == "int32" {
			v, err := strconv.ParseInt(raw, 10, 32)
			if err != nil {
				return nil, invalid(err)
			}
			return int32(v), nil
		}
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, invalid(err)
		}
		return v, nil
	case openapi3.TypeNumber:
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, invalid(err)
		}
		return v, nil
	case openapi3.TypeBoolean:
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, invalid(err)
		}
		return v, nil
	case openapi3.TypeString:
		return raw, nil
	}
	return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindOther, Value: raw, Reason: "schema has non primitive type " + typ}
}
