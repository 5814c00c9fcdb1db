// Package contract checks requests and responses against an OpenAPI
// document (openapi.json for the service, control.json for the control
// API) and turns what is wrong into the spec's error object: one
// validation_failed listing the first violations (problem.MaxViolations)
// and counting the others, invalid_json, 413 or 415.
package contract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/mediamock/mediamock/internal/contract/quick"
)

// Contract is a parsed OpenAPI document and one route per operation.
// Parsing costs milliseconds: parse a document once per process.
type Contract struct {
	doc     *openapi3.T
	routes  map[string]*routers.Route   // by operationId
	noOneOf map[string]*openapi3.Schema // JSON body schemas with their oneOf left out
	inputs  map[string]*inputRules      // by operationId: what Validate checks
	quick   map[string]*quick.Check     // by operationId: the fast path of body-less operations
	find    finder                      // operations by method and path, for CheckExchange
	ops     []Operation                 // in document order
	decodes atomic.Uint64               // JSON bodies decoded (Decodes)
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

// ParsePrepared is ParseEmbedded of a document already decoded (doc, the
// same data as Go values, package prepared): its references are resolved
// by kin-openapi's loader, as a load of data would resolve them. The
// contract keeps doc.
func ParsePrepared(name string, data []byte, doc *openapi3.T) (*Contract, error) {
	if err := openapi3.NewLoader().ResolveRefsIn(doc, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return build(name, data, doc, false)
}

func parse(name string, data []byte, validate bool) (*Contract, error) {
	doc, err := load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return build(name, data, doc, validate)
}

// build makes the contract of a loaded document.
func build(name string, data []byte, doc *openapi3.T, validate bool) (*Contract, error) {
	var err error
	if validate {
		if err := doc.Validate(context.Background()); err != nil {
			return nil, fmt.Errorf("%s is not valid: %w", name, err)
		}
	}
	c := &Contract{doc: doc, routes: map[string]*routers.Route{}, noOneOf: map[string]*openapi3.Schema{},
		inputs: map[string]*inputRules{}, quick: map[string]*quick.Check{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			// The server authenticates itself; the validator needs no security check.
			vop := *op
			vop.Security = &openapi3.SecurityRequirements{}
			c.routes[op.OperationID] = &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &vop}
			if c.inputs[op.OperationID], err = newInputRules(doc, op, item); err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", name, method, path, err)
			}
			if q := quick.New(op, item); q != nil {
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

// Scope is the scope an operation requires (x-required-scope).
func (c *Contract) Scope(opID string) string {
	r := c.routes[opID]
	if r == nil {
		return ""
	}
	s, _ := r.Operation.Extensions["x-required-scope"].(string)
	return s
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

// ValidateResponse checks a response of an operation against the
// document. Headers may be spelled as the spec writes them
// (X-RateLimit-Limit) rather than in Go's canonical form: they are judged
// as a client reads them.
func (c *Contract) ValidateResponse(opID string, status int, h http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: answered, Route: c.routes[opID], Options: responseOptions},
		Status:                 status,
		Header:                 canonicalHeader(h),
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// answered is the request a response answers, as the response validator
// reads it: its method only (a HEAD's answer has no body).
var answered = &http.Request{Method: http.MethodGet}

var responseOptions = &openapi3filter.Options{MultiError: true, SkipSettingDefaults: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}

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

// Accepts reports whether the parameters of a call of an operation without
// a body certainly pass Validate (the fast path of package quick); false
// means Validate must judge them, and says why.
func (c *Contract) Accepts(opID string, vars map[string]string, query url.Values) bool {
	return c.quick[opID].Accepts(vars, query)
}
