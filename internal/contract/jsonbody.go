package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// A JSON body is read once, into one buffer of its declared size, and
// judged here: the validator's own path reads it into a growing buffer,
// copies it again into a decoder's growing buffer and decodes it (about
// four times its size for each body in flight), and the handler then read
// it a third time. Here the body is read once, decoded once to judge it,
// and handed on as a Body: the handler decodes the same bytes, where they
// are (wire.DecodeJSONSized).

// Body is a request body read whole: a reader of its bytes, which Bytes
// hands out without a copy.
type Body struct {
	*bytes.Reader
	data []byte
}

// NewBody is a Body of data.
func NewBody(data []byte) *Body { return &Body{Reader: bytes.NewReader(data), data: data} }

// Bytes are the bytes not read yet (all of them, unless read from).
func (b *Body) Bytes() []byte { return b.data[len(b.data)-b.Len():] }

// Close does nothing.
func (b *Body) Close() error { return nil }

// jsonBody is the request body of operation route when r carries JSON for
// it; nil when r carries no JSON or the operation takes none.
func jsonBody(route *openapi3.Operation, r *http.Request) *openapi3.RequestBody {
	if route.RequestBody == nil || route.RequestBody.Value == nil || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return nil
	}
	rb := route.RequestBody.Value
	if c := rb.Content.Get(ct); c == nil || c.Schema == nil {
		return nil
	}
	return rb
}

// readBody reads r's body once, into one buffer of its declared size, and
// leaves a Body of it in its place.
func readBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*Body); ok {
		data := b.Bytes()
		r.GetBody = func() (io.ReadCloser, error) { return NewBody(data), nil }
		return data, nil
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, 64<<20)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	r.Body.Close()
	data := buf.Bytes()
	r.Body, r.ContentLength = NewBody(data), int64(len(data))
	r.GetBody = func() (io.ReadCloser, error) { return NewBody(data), nil }
	return data, err
}

// validateJSONBody judges a JSON body as openapi3filter.ValidateRequestBody
// does, with the same errors, from data decoded once.
func validateJSONBody(input *openapi3filter.RequestValidationInput, rb *openapi3.RequestBody, data []byte) error {
	if len(data) == 0 {
		if rb.Required {
			return &openapi3filter.RequestError{Input: input, RequestBody: rb, Err: openapi3filter.ErrInvalidRequired}
		}
		return nil
	}
	schema := rb.Content.Get(input.Request.Header.Get("Content-Type")).Schema
	value, err := decodeAny(data)
	if err != nil {
		return &openapi3filter.RequestError{Input: input, RequestBody: rb, Reason: "failed to decode request body",
			Err: &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: jsonSyntax(err)}}
	}
	opts := []openapi3.SchemaValidationOption{openapi3.VisitAsRequest(), openapi3.MultiErrors()}
	if input.Route != nil && input.Route.Spec.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	if err := schema.Value.VisitJSON(value, opts...); err != nil {
		id := strings.TrimSpace(schema.Ref)
		if id == "" {
			id = strings.TrimSpace(schema.Value.Title)
		}
		if id != "" {
			id = " " + id
		}
		return &openapi3filter.RequestError{Input: input, RequestBody: rb, Reason: "doesn't match schema" + id, Err: err}
	}
	return nil
}

// jsonSyntax words a decoding error as the handler's decoder does.
func jsonSyntax(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		return errors.New("unexpected data after the JSON value")
	case errors.As(err, &se) && strings.HasPrefix(se.Error(), "unexpected end of JSON input"):
		return errors.New("unexpected EOF")
	}
	return err
}
