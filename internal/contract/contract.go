// Package contract checks requests and responses against an OpenAPI
// document (openapi.json for the service, control.json for the control
// API) and turns what is wrong into the spec's error object: one
// validation_failed listing every violation, invalid_json, 413 or 415.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/mediamock/mediamock/internal/problem"
)

// Contract is a parsed OpenAPI document and one route per operation.
// Parsing costs milliseconds: parse a document once per process.
type Contract struct {
	doc     *openapi3.T
	routes  map[string]*routers.Route   // by operationId
	noOneOf map[string]*openapi3.Schema // JSON body schemas with their oneOf left out
	quick   map[string]*quickCheck      // by operationId: the fast path of body-less operations
	find    finder                      // operations by method and path, for CheckExchange
	ops     []Operation                 // in document order
}

// Parse loads and validates an OpenAPI document; name is used in errors.
func Parse(name string, data []byte) (*Contract, error) {
	return parse(name, data, true)
}

// ParseEmbedded parses a document built into the program, without checking
// it against the OpenAPI rules once more at each start: a test checks the
// embedded documents with Parse.
func ParseEmbedded(name string, data []byte) (*Contract, error) {
	return parse(name, data, false)
}

func parse(name string, data []byte, validate bool) (*Contract, error) {
	doc, err := load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if validate {
		if err := doc.Validate(context.Background()); err != nil {
			return nil, fmt.Errorf("%s is not valid: %w", name, err)
		}
	}
	c := &Contract{doc: doc, routes: map[string]*routers.Route{}, noOneOf: map[string]*openapi3.Schema{}, quick: map[string]*quickCheck{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			// The server authenticates itself; the validator needs no security check.
			vop := *op
			vop.Security = &openapi3.SecurityRequirements{}
			c.routes[op.OperationID] = &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &vop}
			if q := newQuickCheck(op, item); q != nil {
				c.quick[op.OperationID] = q
			}
			if op.RequestBody == nil {
				continue
			}
			if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && len(mt.Schema.Value.OneOf) > 0 {
				alt := *mt.Schema.Value
				alt.OneOf = nil
				c.noOneOf[op.OperationID] = &alt
			}
		}
	}
	if c.ops, err = c.operations(data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// beyondOneOf finds what else is wrong with a body that broke a oneOf rule:
// the validator stops at a failed oneOf, but a developer should see every
// violation at once, so the body is validated again against the schema
// without its oneOf.
func (c *Contract) beyondOneOf(r *http.Request, opID string, err error, exempt func(string) bool, exempted *int) []problem.Violation {
	alt := c.noOneOf[opID]
	if alt == nil || !hasOneOfError(err) || r.GetBody == nil {
		return nil
	}
	body, gerr := r.GetBody()
	if gerr != nil {
		return nil
	}
	defer body.Close()
	var value any
	if json.NewDecoder(body).Decode(&value) != nil {
		return nil
	}
	verr := alt.VisitJSON(value, openapi3.MultiErrors(), openapi3.VisitAsRequest())
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

// Scope is the scope an operation requires (x-required-scope).
func (c *Contract) Scope(opID string) string {
	r := c.routes[opID]
	if r == nil {
		return ""
	}
	s, _ := r.Operation.Extensions["x-required-scope"].(string)
	return s
}

var validationOptions = &openapi3filter.Options{
	MultiError:          true,
	SkipSettingDefaults: true,
	AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
}

// validationOptionsNoBody leave the body to validateJSONBody.
var validationOptionsNoBody = &openapi3filter.Options{
	MultiError:          true,
	SkipSettingDefaults: true,
	AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
	ExcludeRequestBody:  true,
}

// ValidateRequest checks a request against its operation and turns every
// problem into one error: 400 validation_failed listing each violation,
// 400 invalid_json, 413 or 415.
func (c *Contract) ValidateRequest(r *http.Request, opID string, vars map[string]string, query url.Values) error {
	judged := r
	if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" && r.Body != nil && r.Body != http.NoBody {
		raw, skeleton, err := formSkeleton(r, params["boundary"])
		if err != nil {
			return err
		}
		// The handler reads the form as it came; the validator judges
		// its skeleton.
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		judged = r.Clone(r.Context())
		judged.Body, judged.ContentLength = io.NopCloser(bytes.NewReader(skeleton)), int64(len(skeleton))
	}
	exempt := ownURLsOf(r.Context())
	route := c.routes[opID]
	opts := validationOptions
	rb := jsonBody(route.Operation, r)
	var data []byte
	var readErr error
	if rb != nil { // read once and judged here (jsonbody.go)
		data, readErr = readBody(r)
		opts = validationOptionsNoBody
	}
	input := &openapi3filter.RequestValidationInput{Request: judged, PathParams: vars, QueryParams: query, Route: route, Options: opts}
	err := openapi3filter.ValidateRequest(r.Context(), input)
	if rb != nil {
		berr := validateJSONBody(input, rb, data)
		if readErr != nil {
			berr = &openapi3filter.RequestError{Input: input, RequestBody: rb, Reason: "reading failed", Err: readErr}
		}
		if berr != nil {
			var me openapi3.MultiError
			if errors.As(err, &me) {
				err = append(me, berr)
			} else {
				err = openapi3.MultiError{berr}
			}
		}
	}
	if err == nil {
		return nil
	}
	var violations []problem.Violation
	var first error
	exempted := 0
	for _, e := range flatten(err) {
		v, terminal := classify(e, exempt, &exempted)
		if terminal != nil {
			if first == nil {
				first = terminal
			}
			continue
		}
		violations = append(violations, v...)
	}
	if first != nil {
		return first
	}
	violations = append(violations, c.beyondOneOf(r, opID, err, exempt, &exempted)...)
	if len(violations) == 0 && exempted > 0 {
		return nil
	}
	if len(violations) == 0 {
		violations = []problem.Violation{{In: "request", Field: "", Reason: err.Error()}}
	}
	return problem.InvalidError(violations)
}

// formSkeleton reads a multipart form's body once, at its declared size,
// and returns it with its skeleton: the same parts, the files among them
// empty. The validator reads a body several times over (into a buffer,
// then each part into a string): judging the skeleton costs nothing
// whatever the files' size, and loses nothing, since openapi.json says of
// a file only that it is binary. The handler checks the files itself.
func formSkeleton(r *http.Request, boundary string) (raw, skeleton []byte, err error) {
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, problem.TooLarge(mbe.Limit)
		}
		return nil, nil, &problem.Error{Kind: problem.EINVALID, Code: "invalid_body", Message: "The request body cannot be read: " + err.Error() + "."}
	}
	raw = buf.Bytes()
	var out bytes.Buffer
	mw := multipart.NewWriter(&out)
	if mw.SetBoundary(boundary) != nil {
		return raw, raw, nil // the validator says what is wrong with it
	}
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return raw, raw, nil // malformed: the validator judges it whole
		}
		w, err := mw.CreatePart(part.Header)
		if err != nil {
			return raw, raw, nil
		}
		if part.FileName() == "" {
			if _, err := io.Copy(w, part); err != nil {
				return raw, raw, nil
			}
		}
	}
	mw.Close()
	return raw, out.Bytes(), nil
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
func classify(err error, exempt func(string) bool, exempted *int) ([]problem.Violation, error) {
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
	case strings.HasPrefix(re.Reason, "header Content-Type has unexpected value"):
		return nil, unsupportedMediaType(re)
	case re.Reason == "failed to decode request body":
		if strings.HasPrefix(re.Input.Request.Header.Get("Content-Type"), "multipart/") {
			if m := undefinedPart.FindStringSubmatch(re.Err.Error()); m != nil {
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

var undefinedPart = regexp.MustCompile(`part ([^:\s]+): undefined`)

var unsupportedProperty = regexp.MustCompile(`^property "([^"]+)" is unsupported$`)

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
		case unsupportedProperty.MatchString(se.Reason):
			v.Field = joinPointer(field, []string{unsupportedProperty.FindStringSubmatch(se.Reason)[1]})
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
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
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

func unsupportedMediaType(re *openapi3filter.RequestError) *problem.Error {
	var accepted []string
	for mt := range re.RequestBody.Content {
		accepted = append(accepted, mt)
	}
	slices.Sort(accepted)
	got := re.Input.Request.Header.Get("Content-Type")
	if got == "" {
		got = "(none)"
	}
	return &problem.Error{Kind: problem.EUNSUPPORTED, Code: "unsupported_media_type",
		Message: fmt.Sprintf("Content-Type %s is not accepted; send %s.", got, strings.Join(accepted, " or ")),
		Details: map[string]any{"accepted": accepted}}
}

// Has reports whether the document has an operation.
func (c *Contract) Has(opID string) bool { return c.routes[opID] != nil }

// Route is the operation's route, for validators that need one.
func (c *Contract) Route(opID string) *routers.Route { return c.routes[opID] }

// Statuses lists the statuses an operation declares, in no order.
func (c *Contract) Statuses(opID string) []int {
	r := c.routes[opID]
	if r == nil {
		return nil
	}
	var out []int
	for code := range r.Operation.Responses.Map() {
		if st, err := strconv.Atoi(code); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// ValidateResponse checks a response against its operation. Headers may
// be spelled as the spec writes them (X-RateLimit-Limit) rather than in
// Go's canonical form: they are judged as a client reads them.
func (c *Contract) ValidateResponse(r *http.Request, opID string, status int, h http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, Route: c.routes[opID], Options: validationOptions},
		Status:                 status,
		Header:                 canonicalHeader(h),
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// canonicalHeader is h with its names in Go's canonical form, as the
// validator looks them up: a header set as the spec spells it
// (X-RateLimit-Limit) is found.
func canonicalHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], v...)
	}
	return out
}
