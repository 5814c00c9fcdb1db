package contract

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/mediamock/mediamock/sim"
)

// ErrNoOperation is the error of an exchange outside every operation.
var ErrNoOperation = errors.New("no operation of the document matches the request")

// finder finds operations by method and path, as a client (or a proxy)
// that knows only the document would.
type finder struct {
	once   sync.Once
	router routers.Router
	err    error
}

// CheckExchange validates a response against the operation that the
// request's method and path name in the document (its servers give the base
// path): what a client or a proxy sees, whatever served it. The request's
// body is not read.
func (c *Contract) CheckExchange(r *http.Request, status int, h http.Header, body []byte) error {
	c.find.once.Do(func() { c.find.router, c.find.err = gorillamux.NewRouter(c.doc) })
	if c.find.err != nil {
		return c.find.err
	}
	vr := r.Clone(context.Background())
	vr.Body = http.NoBody
	route, params, err := c.find.router.FindRoute(vr)
	if err != nil {
		return ErrNoOperation
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: status, Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// Operation finds the operation a request's method and path name in the
// document, with its path parameters.
func (c *Contract) Operation(r *http.Request) (opID string, vars map[string]string, ok bool) {
	c.find.once.Do(func() { c.find.router, c.find.err = gorillamux.NewRouter(c.doc) })
	if c.find.err != nil {
		return "", nil, false
	}
	vr := r.Clone(context.Background())
	vr.Body = http.NoBody
	route, params, err := c.find.router.FindRoute(vr)
	if err != nil {
		return "", nil, false
	}
	return route.Operation.OperationID, params, true
}

// Violations lists what a validation error found, each with its JSON path,
// for reports: in is "body", "header" or "response".
func Violations(err error, in string) []sim.Violation {
	if err == nil {
		return nil
	}
	var out []sim.Violation
	for _, e := range flatten(err) {
		var re *openapi3filter.ResponseError
		if errors.As(e, &re) && re.Err != nil {
			if vs := schemaViolations(re.Err, in, "", re.Reason, nil); len(vs) > 0 {
				out = append(out, vs...)
				continue
			}
		}
		out = append(out, schemaViolations(e, in, "", "", nil)...)
	}
	return out
}
