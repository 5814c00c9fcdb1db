package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/mediamock/mediamock/internal/problem"
)

// The validator's oracle: the request path Validate replaced, kept here
// as it was (kin-openapi's openapi3filter.ValidateRequest on an
// *http.Request, a JSON body judged from its bytes, a multipart form's
// skeleton), so that TestValidateIsTheRequestValidator and
// FuzzValidateIsTheRequestValidator hold Validate's errors to its, byte for
// byte.

var oracleOptions = &openapi3filter.Options{
	MultiError:          true,
	SkipSettingDefaults: true,
	AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
}

var oracleOptionsNoBody = &openapi3filter.Options{
	MultiError:          true,
	SkipSettingDefaults: true,
	AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
	ExcludeRequestBody:  true,
}

func (c *Contract) oracleValidateRequest(r *http.Request, opID string, vars map[string]string, query url.Values, exempt func(string) bool) error {
	judged := r
	if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" && r.Body != nil && r.Body != http.NoBody {
		raw, skeleton, err := oracleFormSkeleton(r, params["boundary"])
		if err != nil {
			return err
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		judged = r.Clone(r.Context())
		judged.Body, judged.ContentLength = io.NopCloser(bytes.NewReader(skeleton)), int64(len(skeleton))
	}
	route := c.routes[opID]
	opts := oracleOptions
	rb := oracleJSONBody(route.Operation, r)
	var data []byte
	var readErr error
	if rb != nil {
		data, readErr = oracleReadBody(r)
		opts = oracleOptionsNoBody
	}
	input := &openapi3filter.RequestValidationInput{Request: judged, PathParams: vars, QueryParams: query, Route: route, Options: opts}
	err := openapi3filter.ValidateRequest(r.Context(), input)
	if rb != nil {
		berr := oracleValidateJSONBody(input, rb, data)
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
		v, terminal := classify(e, r.Header.Get("Content-Type"), exempt, &exempted)
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
	violations = append(violations, c.oracleBeyondOneOf(r, opID, err, exempt, &exempted)...)
	if len(violations) == 0 && exempted > 0 {
		return nil
	}
	if len(violations) == 0 {
		violations = []problem.Violation{{In: "request", Field: "", Reason: err.Error()}}
	}
	return problem.InvalidError(violations)
}

func (c *Contract) oracleBeyondOneOf(r *http.Request, opID string, err error, exempt func(string) bool, exempted *int) []problem.Violation {
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

func oracleFormSkeleton(r *http.Request, boundary string) (raw, skeleton []byte, err error) {
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
		return raw, raw, nil
	}
	mr := multipart.NewReader(bytes.NewReader(raw), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return raw, raw, nil
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

func oracleJSONBody(route *openapi3.Operation, r *http.Request) *openapi3.RequestBody {
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

func oracleReadBody(r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, 64<<20)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	r.Body.Close()
	data := buf.Bytes()
	r.Body, r.ContentLength = newBytesBody(data), int64(len(data))
	r.GetBody = func() (io.ReadCloser, error) { return newBytesBody(data), nil }
	return data, err
}

func oracleValidateJSONBody(input *openapi3filter.RequestValidationInput, rb *openapi3.RequestBody, data []byte) error {
	if len(data) == 0 {
		if rb.Required {
			return &openapi3filter.RequestError{Input: input, RequestBody: rb, Err: openapi3filter.ErrInvalidRequired}
		}
		return nil
	}
	schema := rb.Content.Get(input.Request.Header.Get("Content-Type")).Schema
	var value any
	err := json.Unmarshal(data, &value)
	if err != nil {
		return &openapi3filter.RequestError{Input: input, RequestBody: rb, Reason: "failed to decode request body",
			Err: &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: jsonSyntax(err)}}
	}
	opts := []openapi3.SchemaValidationOption{openapi3.VisitAsRequest(), openapi3.MultiErrors()}
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

// oracleRequest is the HTTP request of a case, as a server receives it (no
// GetBody; a body without bytes is http.NoBody), its body capped at limit
// bytes when limit is set.
func oracleRequest(body []byte, ct string, chunked bool, limit int64) *http.Request {
	r, _ := http.NewRequestWithContext(context.Background(), "POST", "http://127.0.0.1/x", bytes.NewReader(body))
	r.GetBody = nil
	if len(body) == 0 && !chunked {
		r.Body = http.NoBody
	}
	if chunked {
		r.ContentLength = -1
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
	}
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	if limit > 0 {
		r.Body = http.MaxBytesReader(nil, r.Body, limit)
	}
	return r
}
