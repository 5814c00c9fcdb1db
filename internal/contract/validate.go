package contract

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/mediamock/mediamock/internal/problem"
)

// Validate checks an operation's input against the document and turns
// every problem into one error: 400 validation_failed listing the first
// violations (problem.MaxViolations) and counting the others, 400
// invalid_json, 413 or 415. Parameters are parsed from their strings as
// their schemas say (integer, number, boolean, string); a JSON body is
// decoded once (Decode, bounded by its schema, if no one did) and judged as
// that value (Body.Value). A pattern that allows the
// server's own file addresses (x-own-file-urls) is not broken by one that
// own recognizes (nil: none).
//
// The errors are those kin-openapi's request validator
// (openapi3filter.ValidateRequest) gives for the same request, schema
// errors and all: its parameter decoding and body checks are followed here
// step by step, on values, without an *http.Request.
func (c *Contract) Validate(opID string, in *Input, own func(string) bool) error {
	rules := c.inputs[opID]
	if rules == nil {
		return fmt.Errorf("contract: no operation %s", opID)
	}
	if in.Body.failed != nil {
		return in.Body.failed
	}
	var me openapi3.MultiError
	for i := range rules.params {
		if err := rules.params[i].check(in, rules.paramOpts); err != nil {
			me = append(me, err)
		}
	}
	if rules.body != nil {
		c.Decode(opID, in, own)
		if err := rules.checkBody(&in.Body); err != nil {
			me = append(me, err)
		}
	}
	if len(me) == 0 {
		return nil
	}
	var violations []problem.Violation
	var first error
	exempted := 0
	for _, e := range flatten(me) {
		v, terminal := classify(e, in.Body.ContentType, own, &exempted)
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
	violations = append(violations, c.beyondOneOf(opID, &in.Body, me, own, &exempted)...)
	if len(violations) == 0 && exempted > 0 {
		return nil
	}
	if len(violations) == 0 {
		violations = []problem.Violation{{In: "request", Field: "", Reason: me.Error()}}
	}
	return problem.Invalid(violations, in.Body.dropped)
}

// ValidateRequest checks a request as an HTTP request (the control API's,
// an exchange the checker saw): its body is read whole, once, decoded and
// judged by Validate; it is left in the request as a reader of the bytes
// read, for a handler to decode where they are (wire.DecodeJSONSized).
func (c *Contract) ValidateRequest(r *http.Request, opID string, vars map[string]string, query url.Values) error {
	return c.Validate(opID, &Input{Path: vars, Query: query, Body: c.requestBody(opID, r)}, nil)
}

// requestBody reads an HTTP request's body for ValidateRequest.
func (c *Contract) requestBody(opID string, r *http.Request) Body {
	ct := r.Header.Get("Content-Type")
	b := Body{ContentType: ct}
	if r.Body == nil || r.Body == http.NoBody {
		return b
	}
	mt, params, _ := mime.ParseMediaType(ct)
	route := c.routes[opID]
	form := mt == "multipart/form-data"
	if !form && (route == nil || route.Operation.RequestBody == nil || route.Operation.RequestBody.Value == nil) {
		return b // no operation reads it
	}
	data, err := readAll(r.Body, r.ContentLength)
	if _, read := r.Body.(*bytesBody); !read {
		r.Body.Close()
		r.Body, r.ContentLength = newBytesBody(data), int64(len(data))
	}
	r.GetBody = func() (io.ReadCloser, error) { return newBytesBody(data), nil }
	if form {
		if err != nil {
			return readForm(b, &failingReader{err}, params["boundary"], 0)
		}
		return readForm(b, bytes.NewReader(data), params["boundary"], int64(len(data)))
	}
	return c.bodyOf(b, route.Operation.RequestBody.Value, data, err)
}

// failingReader fails with err.
type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

// inputRules are what Validate checks of one operation's input.
type inputRules struct {
	params    []paramRule
	paramOpts []openapi3.SchemaValidationOption
	body      *openapi3.RequestBody
	bodyOpts  []openapi3.SchemaValidationOption
	shapes    map[*openapi3.MediaType]*shape // what the bounded decode follows of a JSON body
}

// newInputRules reads what Validate checks of an operation: its parameters
// in the order kin-openapi's validator takes them (the path item's not
// overridden, then the operation's), and its body. A parameter or a body
// Validate cannot judge as kin-openapi would is an error of the document.
func newInputRules(doc *openapi3.T, op *openapi3.Operation, item *openapi3.PathItem) (*inputRules, error) {
	r := &inputRules{paramOpts: []openapi3.SchemaValidationOption{openapi3.MultiErrors()},
		bodyOpts: []openapi3.SchemaValidationOption{openapi3.VisitAsRequest(), openapi3.MultiErrors()}}
	if doc.IsOpenAPI31OrLater() {
		r.paramOpts = append(r.paramOpts, openapi3.EnableJSONSchema2020())
		r.bodyOpts = append(r.bodyOpts, openapi3.EnableJSONSchema2020())
	}
	var params []*openapi3.Parameter
	for _, ref := range item.Parameters {
		if op.Parameters != nil && op.Parameters.GetByInAndName(ref.Value.In, ref.Value.Name) != nil {
			continue
		}
		params = append(params, ref.Value)
	}
	for _, ref := range op.Parameters {
		params = append(params, ref.Value)
	}
	for _, p := range params {
		rule, err := newParamRule(p)
		if err != nil {
			return nil, err
		}
		r.params = append(r.params, rule)
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		r.body = op.RequestBody.Value
		for mt, c := range r.body.Content {
			if c.Schema == nil {
				continue
			}
			switch mt, _, _ := mime.ParseMediaType(mt); {
			case mt == "application/json":
				if r.shapes == nil {
					r.shapes = map[*openapi3.MediaType]*shape{}
				}
				r.shapes[c] = shapeOf(doc, c.Schema)
			case mt == "multipart/form-data":
				if len(c.Encoding) > 0 {
					return nil, fmt.Errorf("the body's %s has encodings, which the validator does not take", mt)
				}
				if !c.Schema.Value.Type.Is(openapi3.TypeObject) {
					return nil, fmt.Errorf("the body's %s is not an object", mt)
				}
			case isBinary(c.Schema.Value):
			default:
				return nil, fmt.Errorf("the body's %s: the validator judges JSON, multipart forms and binary bodies", mt)
			}
		}
	}
	return r, nil
}

const prefixInvalidCT = "header Content-Type has unexpected value"

// checkBody judges a body as openapi3filter.ValidateRequestBody does (and,
// for JSON, as its own path did on a body decoded once).
func (r *inputRules) checkBody(b *Body) error {
	rb := r.body
	if b.readErr != nil {
		return &openapi3filter.RequestError{RequestBody: rb, Reason: "reading failed", Err: b.readErr}
	}
	if !b.present {
		if rb.Required {
			return &openapi3filter.RequestError{RequestBody: rb, Err: openapi3filter.ErrInvalidRequired}
		}
		return nil
	}
	if len(rb.Content) == 0 {
		return nil
	}
	mt := rb.Content.Get(b.ContentType)
	if mt == nil {
		return &openapi3filter.RequestError{RequestBody: rb, Reason: fmt.Sprintf("%s %q", prefixInvalidCT, b.ContentType)}
	}
	if mt.Schema == nil {
		return nil
	}
	value := b.Value
	switch {
	case b.isJSON && b.decodeErr != nil:
		return &openapi3filter.RequestError{RequestBody: rb, Reason: "failed to decode request body",
			Err: &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: jsonSyntax(b.decodeErr)}}
	case b.isJSON:
	default:
		var err error
		if value, err = decodeOther(b, mt.Schema); err != nil {
			return &openapi3filter.RequestError{RequestBody: rb, Reason: "failed to decode request body", Err: err}
		}
	}
	if err := mt.Schema.Value.VisitJSON(value, r.bodyOpts...); err != nil {
		id := strings.TrimSpace(mt.Schema.Ref)
		if id == "" {
			id = strings.TrimSpace(mt.Schema.Value.Title)
		}
		if id != "" {
			id = " " + id
		}
		return &openapi3filter.RequestError{RequestBody: rb, Reason: "doesn't match schema" + id, Err: err}
	}
	return nil
}
