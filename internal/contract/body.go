package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediamock/mediamock/internal/problem"
)

// A request's body is read once by the front that received it and decoded
// once, into a value: the validator judges that value (Validate) and the
// handler's input is bound from it. A JSON body is read into one buffer of
// its declared size and decoded by the validator, bounded by the
// operation's schema (bounded.go), its strings sharing the buffer's bytes
// (a 10 MB data URI is not copied); a multipart form is read part by part
// into a Form; a body of another media type is kept as its bytes, for the
// validator to decode as openapi.json says.

// Input is an operation's input as a front received it: its parameters as
// the strings the front read (a path's variables, a query), and its body,
// decoded once.
type Input struct {
	Path  map[string]string
	Query url.Values
	Body  Body
}

// Body is a request's body, read once (ReadBody, ArgumentsBody) and decoded
// once, by Validate. The zero Body is no body.
type Body struct {
	// ContentType is the Content-Type the body came with.
	ContentType string
	// Value is the body decoded: a JSON document as encoding/json decodes
	// one into an any (map[string]any, []any, string, float64, bool, nil),
	// once Validate has judged it (of a body it refuses, only what its
	// error needs), or a multipart form as a *Form. Nil for a body of
	// another media type or one that did not decode.
	Value any

	present bool   // some bytes came
	isJSON  bool   // a JSON document for the operation, decoded into Value by Validate
	decoded bool   // Validate decoded it
	raw     []byte // the bytes of a JSON body, or of a body of another media type
	// dropped counts the violations the bounded decode found and did not
	// keep the makings of (Validate's error counts them).
	dropped int
	// readErr is why the body could not be read whole (its cap, a
	// timeout), decodeErr why its JSON did not decode.
	readErr, decodeErr error
	// failed is the request's own error: a multipart form that could not
	// be read at all (invalid_body, or 413 over the cap).
	failed error
}

// Present reports whether the request carried a body (some bytes).
func (b *Body) Present() bool { return b.present }

// Form is a multipart/form-data body read part by part: every part's name,
// file name, header and bytes, in order.
type Form struct {
	Parts []FormPart
	// Err is why the form could not be read past its last part: the
	// multipart reader's error. Nil when the form ended well.
	Err error
	// ReaderErr is why a multipart reader could not be made from the
	// request's Content-Type (no boundary parameter, a type that is not
	// multipart/form-data).
	ReaderErr error
}

// FormPart is one part of a multipart form.
type FormPart struct {
	Name, FileName string
	Header         http.Header
	// Data are the part's bytes, read whole.
	Data []byte
	// Err is why the part's bytes could not be read whole.
	Err error
}

// Decodes is how many JSON bodies the contract has decoded (Validate):
// one for each call of an operation that carries one.
func (c *Contract) Decodes() uint64 { return c.decodes.Load() }

// Decode decodes an input's JSON body once, as Validate judges it: bounded
// by the operation's schema (bounded.go), its strings sharing the body's
// bytes; own recognizes the server's own file addresses, as for Validate.
// Validate decodes the body itself when no one did: what reads a field of
// the body before the validator runs (the admission of a fault rule that
// targets a modality) calls it first.
func (c *Contract) Decode(opID string, in *Input, own func(string) bool) {
	b := &in.Body
	rules := c.inputs[opID]
	if b.decoded || !b.isJSON || b.raw == nil || rules == nil || rules.body == nil {
		return
	}
	b.decoded = true
	c.decodes.Add(1)
	var sh *shape
	if mt := rules.body.Content.Get(b.ContentType); mt != nil {
		sh = rules.shapes[mt]
	}
	b.Value, b.dropped, b.decodeErr = decodeBounded(b.raw, sh, rules.bodyOpts, own)
}

// ReadBody reads a request's body (of size bytes, -1 when unknown) for an
// operation, once: a multipart form part by part, a JSON body the
// operation takes into one buffer and decoded, any other body as its
// bytes; nothing when the operation takes no body. The JSON value's
// strings share the bytes read.
func (c *Contract) ReadBody(opID, contentType string, r io.Reader, size int64) Body {
	b := Body{ContentType: contentType}
	if r == nil || r == http.NoBody {
		return b
	}
	// A form is read whatever the operation takes, as its validation
	// always did: reading it may fail on its own.
	if mt, params, _ := mime.ParseMediaType(contentType); mt == "multipart/form-data" {
		return readForm(b, r, params["boundary"], size)
	}
	route := c.routes[opID]
	if route == nil || route.Operation.RequestBody == nil || route.Operation.RequestBody.Value == nil {
		return b // no operation reads it
	}
	data, err := readAll(r, size)
	return c.bodyOf(b, route.Operation.RequestBody.Value, data, err)
}

// BodyOf is the body of a request a front read whole itself (data, and
// err, why not all of it when it was cut short), as ReadBody reads one:
// the bytes are the body's, not copied.
func (c *Contract) BodyOf(opID, contentType string, data []byte, err error) Body {
	if err != nil {
		return c.ReadBody(opID, contentType, io.MultiReader(bytes.NewReader(data), &failingReader{err}), -1)
	}
	return c.ReadBody(opID, contentType, newBytesBody(data), int64(len(data)))
}

// bodyOf is a body of bytes read whole (err: why not all).
func (c *Contract) bodyOf(b Body, rb *openapi3.RequestBody, data []byte, err error) Body {
	b.present, b.readErr = len(data) > 0, err
	switch {
	case !takesJSON(rb, b.ContentType):
		b.raw = data
	case err == nil && len(data) > 0:
		b.isJSON, b.raw = true, data // decoded by Validate
	default:
		b.isJSON = true // judged as JSON: a body that could not be read, or none
	}
	return b
}

// takesJSON reports whether an operation's body rb takes JSON in a body of
// Content-Type ct (application/json with a schema for it).
func takesJSON(rb *openapi3.RequestBody, ct string) bool {
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return false
	}
	c := rb.Content.Get(ct)
	return c != nil && c.Schema != nil
}

// ArgumentsBody is the JSON body of an operation made of a tool call's
// arguments: data is one object of the arguments that are not parameters,
// their names and values as sent. It is judged and decoded as a REST body
// of these bytes is.
func (c *Contract) ArgumentsBody(data []byte) Body {
	return Body{ContentType: "application/json", present: true, isJSON: true, raw: data}
}

// readAll reads a body whole into one buffer of its declared size.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if b, ok := r.(*bytesBody); ok {
		return b.Bytes(), nil
	}
	var buf bytes.Buffer
	if size > 0 {
		buf.Grow(int(min(size, 64<<20)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// readForm reads a multipart form part by part. A failure to read the
// request's body (not the form's syntax) is the request's error: 413 over
// its cap, invalid_body otherwise.
func readForm(b Body, r io.Reader, boundary string, size int64) Body {
	b.present = true
	src := &readerOf{r: r}
	form := &Form{ReaderErr: multipartReaderErr(b.ContentType)}
	mr := multipart.NewReader(src, boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			form.Err = err
			break
		}
		fp := FormPart{Name: part.FormName(), FileName: part.FileName(), Header: http.Header(part.Header)}
		var buf bytes.Buffer
		if fp.FileName != "" && size > 0 {
			// A file is read into one buffer of what is left of the body
			// at most: growing one would leave copies of it behind.
			buf.Grow(int(min(max(size-src.n, 0), 64<<20)))
		}
		_, err = buf.ReadFrom(part)
		fp.Data, fp.Err = buf.Bytes(), err
		form.Parts = append(form.Parts, fp)
		if err != nil {
			break
		}
	}
	// What is left is read too (after a part that failed, or past the
	// form's end): a body over its cap is refused as such, whatever the
	// form's syntax.
	_, _ = io.Copy(io.Discard, src)
	if src.err != nil {
		var mbe *http.MaxBytesError
		if errors.As(src.err, &mbe) {
			b.failed = problem.TooLarge(mbe.Limit)
		} else {
			b.failed = &problem.Error{Kind: problem.EINVALID, Code: "invalid_body", Message: "The request body cannot be read: " + src.err.Error() + "."}
		}
		return b
	}
	b.Value = form
	return b
}

// multipartReaderErr is why net/http would make no multipart reader for a
// request of Content-Type ct.
func multipartReaderErr(ct string) error {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" {
		return http.ErrNotMultipart
	}
	if _, ok := params["boundary"]; !ok {
		return http.ErrMissingBoundary
	}
	return nil
}

// readerOf counts what is read from a body and keeps its first error.
type readerOf struct {
	r   io.Reader
	n   int64
	err error
}

func (r *readerOf) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// bytesBody is a request body read whole: a reader of its bytes, which
// Bytes hands out without a copy (wire.DecodeJSONSized reads them where
// they are).
type bytesBody struct {
	*bytes.Reader
	data []byte
}

func newBytesBody(data []byte) *bytesBody {
	return &bytesBody{Reader: bytes.NewReader(data), data: data}
}

// Bytes are the bytes not read yet (all of them, unless read from).
func (b *bytesBody) Bytes() []byte { return b.data[len(b.data)-b.Len():] }

// Close does nothing.
func (b *bytesBody) Close() error { return nil }

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
