package contract

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// An XML answer (the client report's JUnit form) is checked as the string
// its schema says: kin-openapi decodes no XML by itself.
func init() {
	openapi3filter.RegisterBodyDecoder("application/xml", func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		data, err := io.ReadAll(body)
		return string(data), err
	})
}

// ErrNoOperation is the error of an exchange outside every operation.
var ErrNoOperation = errors.New("no operation of the document matches the request")

// finder finds operations by method and path, as a client (or a proxy)
// that knows only the document would.
type finder struct {
	once   sync.Once
	router routers.Router
	err    error
}

// bodiless is a copy of a request without its body, for the router and
// the response validator, which must not read it.
func bodiless(r *http.Request) *http.Request {
	vr := r.Clone(context.Background())
	vr.Body = http.NoBody
	return vr
}

// findRoute is the document's route of a bodiless request, and its path
// parameters.
func (c *Contract) findRoute(vr *http.Request) (*routers.Route, map[string]string, error) {
	c.find.once.Do(func() { c.find.router, c.find.err = gorillamux.NewRouter(c.doc) })
	if c.find.err != nil {
		return nil, nil, c.find.err
	}
	route, params, err := c.find.router.FindRoute(vr)
	if err != nil {
		return nil, nil, ErrNoOperation
	}
	return route, params, nil
}

// FindOperation names the operation that a request's method and path match
// in the document (its servers give the base path), with the path
// parameters, for ValidateRequest. It returns ErrNoOperation when none does.
func (c *Contract) FindOperation(r *http.Request) (opID string, vars map[string]string, err error) {
	route, params, err := c.findRoute(bodiless(r))
	if err != nil {
		return "", nil, err
	}
	return route.Operation.OperationID, params, nil
}

// CheckExchange validates a response against the operation that the
// request's method and path name in the document (its servers give the base
// path): what a client or a proxy sees, whatever served it. The request's
// body is not read.
func (c *Contract) CheckExchange(r *http.Request, status int, h http.Header, body []byte) error {
	vr := bodiless(r)
	route, params, err := c.findRoute(vr)
	if err != nil {
		return err
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: status, Header: canonicalHeader(h), Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// Finding is one thing a response does against its operation in the
// document.
type Finding struct {
	// In is where: "status", "header", "content_type" or "body".
	In string
	// Name is the header's name, or the JSON path in the body, like
	// $.assets[0].credits ($ for the whole body).
	Name string
	// Reason says what is wrong.
	Reason string
	// Keyword is the schema keyword a body broke (enum, required,
	// additionalProperties, ...); "" when not known.
	Keyword string
	// Pointer is Name as a JSON pointer's segments (nil for the whole body).
	Pointer []string
}

// ExchangeFindings is CheckExchange with every finding listed, each with
// where it is. The validator stops at the first header it finds wrong, so
// each such header is noted, given a placeholder value in a copy of the
// headers, and the check repeated: a missing header does not hide what is
// wrong with the body. The error is ErrNoOperation, or a document the
// router cannot use.
func (c *Contract) ExchangeFindings(r *http.Request, status int, h http.Header, body []byte) ([]Finding, error) {
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	var out []Finding
	seen := map[string]bool{}
	for {
		err := c.CheckExchange(r, status, h, body)
		if err == nil {
			return out, nil
		}
		var re *openapi3filter.ResponseError
		if !errors.As(err, &re) {
			return out, err
		}
		if m := headerReason().FindStringSubmatch(re.Reason); m != nil {
			name := m[1] // as the document spells it (X-RateLimit-Limit)
			out = append(out, Finding{In: "header", Name: name, Reason: strings.TrimPrefix(re.Error(), "response ")})
			if seen[http.CanonicalHeaderKey(name)] {
				return out, nil
			}
			seen[http.CanonicalHeaderKey(name)] = true
			h.Set(name, "0") // satisfies the document's integer and string headers
			continue
		}
		return append(out, findingsOf(re)...), nil
	}
}

var headerReason = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`header "([^"]+)"`) })

var missingProperty = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^property "([^"]+)" is missing$`) })

func findingsOf(re *openapi3filter.ResponseError) []Finding {
	switch {
	case re.Reason == "status is not supported":
		return []Finding{{In: "status", Reason: "the operation declares no such status"}}
	case strings.Contains(re.Reason, "Content-Type has unexpected value"):
		return []Finding{{In: "content_type", Name: "Content-Type", Reason: strings.TrimPrefix(re.Reason, "response ")}}
	case re.Err == nil:
		return []Finding{{In: "body", Name: "$", Reason: re.Reason}}
	}
	var out []Finding
	for _, e := range flatten(re.Err) {
		var se *openapi3.SchemaError
		if !errors.As(e, &se) {
			out = append(out, Finding{In: "body", Name: "$", Reason: re.Reason + ": " + rootCause(e)})
			continue
		}
		reason := se.Reason
		if missingProperty().MatchString(reason) {
			reason = "is required" // the pointer names the property
		}
		ptr := se.JSONPointer()
		out = append(out, Finding{In: "body", Name: JSONPath(ptr), Reason: reason, Keyword: se.SchemaField, Pointer: ptr})
	}
	return out
}

// JSONPath renders a JSON pointer as a path from the body's root:
// $.assets[0].credits.
func JSONPath(ptr []string) string {
	s := joinPointer("", ptr)
	if s == "" || strings.HasPrefix(s, "[") {
		return "$" + s
	}
	return "$." + s
}
