package contract

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/mediamock/mediamock/internal/problem"
)

// A validation's errors as the service's violations: each kin-openapi
// error named by its field, worded for people, the server's own file
// addresses waived, the violations beyond a broken oneOf found too.

// beyondOneOf finds what else is wrong with a body that broke a oneOf rule:
// the validator stops at a failed oneOf, but a developer should see every
// violation at once, so the body's value is judged again against the
// schema without its oneOf.
func (c *Contract) beyondOneOf(opID string, b *Body, err error, exempt func(string) bool, exempted *int) []problem.Violation {
	alt := c.noOneOf[opID]
	if alt == nil || !b.isJSON || b.readErr != nil || b.decodeErr != nil || !hasOneOfError(err) {
		return nil
	}
	verr := alt.VisitJSON(b.Value, openapi3.MultiErrors(), openapi3.VisitAsRequest())
	if verr == nil {
		return nil
	}
	return schemaViolations(verr, "body", "", "", nil, exempt, exempted)
}

func hasOneOfError(err error) bool {
	for _, e := range flatten(err) {
		var re *openapi3filter.RequestError
		if errors.As(e, &re) && re.Err != nil && re.Err != e {
			if hasOneOfError(re.Err) {
				return true
			}
			continue
		}
		var se *openapi3.SchemaError
		if errors.As(e, &se) && se.SchemaField == "oneOf" {
			return true
		}
	}
	return false
}

func flatten(err error) []error {
	if me, ok := err.(openapi3.MultiError); ok {
		var out []error
		for _, e := range me {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// classify turns one validation error into violations, or into an error that
// answers the request on its own (bad JSON, wrong media type, too large).
// ct is the body's Content-Type.
func classify(err error, ct string, exempt func(string) bool, exempted *int) ([]problem.Violation, error) {
	var re *openapi3filter.RequestError
	if !errors.As(err, &re) {
		return []problem.Violation{{In: "request", Reason: err.Error()}}, nil
	}
	var mbe *http.MaxBytesError
	if errors.As(re.Err, &mbe) {
		return nil, problem.TooLarge(mbe.Limit)
	}
	if re.Parameter != nil {
		return schemaViolations(re.Err, re.Parameter.In, re.Parameter.Name, paramReason(re), re.Parameter, exempt, exempted), nil
	}
	if re.RequestBody == nil {
		return []problem.Violation{{In: "request", Reason: re.Error()}}, nil
	}
	switch {
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
		return []problem.Violation{{In: "body", Field: "", Reason: "a request body is required"}}, nil
	case strings.HasPrefix(re.Reason, prefixInvalidCT):
		return nil, unsupportedMediaType(re, ct)
	case re.Reason == "failed to decode request body":
		if strings.HasPrefix(ct, "multipart/") {
			if m := undefinedPart().FindStringSubmatch(re.Err.Error()); m != nil {
				var allowed []any
				if mt := re.RequestBody.Content.Get("multipart/form-data"); mt != nil && mt.Schema != nil {
					allowed = propertyNames(mt.Schema.Value)
				}
				return []problem.Violation{{In: "body", Field: m[1], Reason: "unknown field", Allowed: allowed}}, nil
			}
			return nil, &problem.Error{Kind: problem.EINVALID, Code: "invalid_body", Message: "The multipart form cannot be read: " + rootCause(re.Err) + "."}
		}
		var pe *openapi3filter.ParseError
		if errors.As(re.Err, &pe) || strings.Contains(re.Err.Error(), "json") {
			return nil, &problem.Error{Kind: problem.EINVALID, Code: "invalid_json", Message: "The body is not valid JSON: " + rootCause(re.Err) + "."}
		}
		return nil, &problem.Error{Kind: problem.EINVALID, Code: "invalid_body", Message: "The body cannot be read: " + rootCause(re.Err) + "."}
	}
	return schemaViolations(re.Err, "body", "", re.Reason, nil, exempt, exempted), nil
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

func paramReason(re *openapi3filter.RequestError) string {
	if re.Err == nil {
		return re.Reason
	}
	return paramReasonOf(re.Err, re.Parameter)
}

var undefinedPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`part ([^:\s]+): undefined`) })

var unsupportedProperty = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^property "([^"]+)" is unsupported$`) })

// schemaViolations lists the schema errors inside err, each with its field.
// A pattern that allows the server's own file addresses (x-own-file-urls)
// is not broken by one of them: exempt recognizes them, and exempted
// counts the violations it waived.
func schemaViolations(err error, in, base, fallback string, param *openapi3.Parameter, exempt func(string) bool, exempted *int) []problem.Violation {
	var out []problem.Violation
	for _, e := range flatten(err) {
		var se *openapi3.SchemaError
		if !errors.As(e, &se) {
			reason := fallback
			if reason == "" && e != nil {
				reason = rootCause(e)
			}
			if e != nil && param != nil {
				reason = paramReasonOf(e, param)
			}
			out = append(out, problem.Violation{In: in, Field: base, Reason: reason})
			continue
		}
		field := joinPointer(base, se.JSONPointer())
		v := problem.Violation{In: in, Field: field, Reason: se.Reason}
		switch {
		case unsupportedProperty().MatchString(se.Reason):
			v.Field = joinPointer(field, []string{unsupportedProperty().FindStringSubmatch(se.Reason)[1]})
			v.Reason = "unknown field"
			v.Allowed = propertyNames(se.Schema)
		case se.SchemaField == "required":
			v.Reason = "is required"
		case se.SchemaField == "enum":
			v.Allowed = se.Schema.Enum
			v.Reason = "must be one of the allowed values"
		case se.SchemaField == "pattern" && ownURL(se, exempt):
			*exempted++
			continue
		case se.SchemaField == "pattern":
			if msg, ok := se.Schema.Extensions["x-pattern-message"].(string); ok {
				v.Reason = msg
			}
		case se.SchemaField == "oneOf":
			if msg, ok := se.Schema.Extensions["x-one-of-message"].(string); ok {
				v.Reason = msg
			}
		}
		out = append(out, v)
	}
	return out
}

// countViolations is how many violations schemaViolations makes of err,
// without making them.
func countViolations(err error, exempt func(string) bool) int {
	n := 0
	for _, e := range flatten(err) {
		var se *openapi3.SchemaError
		if errors.As(e, &se) && se.SchemaField == "pattern" && ownURL(se, exempt) {
			continue
		}
		n++
	}
	return n
}

func paramReasonOf(e error, p *openapi3.Parameter) string {
	var pe *openapi3filter.ParseError
	if errors.As(e, &pe) {
		if p != nil && p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Type != nil {
			return "must be " + strings.Join(p.Schema.Value.Type.Slice(), " or ")
		}
		return rootCause(pe)
	}
	if errors.Is(e, openapi3filter.ErrInvalidRequired) {
		return "is required"
	}
	return rootCause(e)
}

func propertyNames(s *openapi3.Schema) []any {
	if s == nil {
		return nil
	}
	names := slices.Sorted(maps.Keys(s.Properties))
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// joinPointer renders a JSON pointer as a field path: options.title, reference_asset_ids[2].
func joinPointer(base string, ptr []string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, p := range ptr {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func unsupportedMediaType(re *openapi3filter.RequestError, got string) *problem.Error {
	accepted := slices.Sorted(maps.Keys(re.RequestBody.Content))
	if got == "" {
		got = "(none)"
	}
	return &problem.Error{Kind: problem.EUNSUPPORTED, Code: "unsupported_media_type",
		Message: fmt.Sprintf("Content-Type %s is not accepted; send %s.", got, strings.Join(accepted, " or ")),
		Details: map[string]any{"accepted": accepted}}
}
