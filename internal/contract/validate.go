package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/mediamock/mediamock/internal/problem"
)

// Validate checks an operation's input against the document and turns
// every problem into one error: 400 validation_failed listing each
// violation, 400 invalid_json, 413 or 415. Parameters are parsed from their
// strings as their schemas say (integer, number, boolean, string); the body
// is judged as it was decoded (Body.Value). A pattern that allows the
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

// paramRule is one parameter of an operation.
type paramRule struct {
	p      *openapi3.Parameter
	schema *openapi3.Schema // nil: nothing to check
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

// decodeOther decodes a body that is not the operation's JSON: a
// multipart form's fields, as openapi3filter.MultipartBodyDecoder makes an
// object of them (a file's bytes are not judged: openapi.json says of a
// file only that it is binary), or the bytes of a binary body.
func decodeOther(b *Body, schema *openapi3.SchemaRef) (any, error) {
	form, ok := b.Value.(*Form)
	if !ok {
		return decodeBytes(b.raw, http.Header{"Content-Type": {b.ContentType}}, schema)
	}
	s := schema.Value
	if !s.Type.Is(openapi3.TypeObject) {
		return nil, errors.New("unsupported schema of request body")
	}
	if _, _, err := mime.ParseMediaType(b.ContentType); err != nil {
		return nil, err
	}
	values := map[string][]any{}
	for i := range form.Parts {
		part := &form.Parts[i]
		name := part.Name
		var valueSchema *openapi3.SchemaRef
		undefined := &openapi3filter.ParseError{Kind: openapi3filter.KindOther, Cause: fmt.Errorf("part %s: undefined", name)}
		if len(s.AllOf) > 0 {
			var exists bool
			for _, sr := range s.AllOf {
				if valueSchema, exists = sr.Value.Properties[name]; exists {
					break
				}
			}
			if !exists {
				return nil, undefined
			}
		} else {
			var exists bool
			if valueSchema, exists = s.Properties[name]; !exists {
				if anyProperties := s.AdditionalProperties.Has; anyProperties != nil {
					if *anyProperties {
						continue
					}
					return nil, undefined
				}
				if s.AdditionalProperties.Schema == nil {
					return nil, undefined
				}
				if valueSchema, exists = s.AdditionalProperties.Schema.Value.Properties[name]; !exists {
					return nil, undefined
				}
			}
			if valueSchema.Value.Type.Is(openapi3.TypeArray) {
				if valueSchema.Value.Items == nil {
					return nil, fmt.Errorf("unsupported schema of multipart part %q: array items required", name)
				}
				valueSchema = valueSchema.Value.Items
			}
		}
		if part.Err != nil && part.FileName == "" {
			return nil, fmt.Errorf("part %s: %w", name, part.Err)
		}
		value, err := decodePart(part, valueSchema)
		if err != nil {
			return nil, err
		}
		values[name] = append(values[name], value)
		if part.Err != nil {
			// A file cut short ends the form: its bytes are not judged,
			// and the reader finds the form's end (io.EOF) past it.
			break
		}
	}
	if form.Err != nil && !fileCut(form) {
		return nil, form.Err
	}
	props := map[string]*openapi3.SchemaRef{}
	if len(s.AllOf) > 0 {
		for _, sr := range s.AllOf {
			maps.Copy(props, sr.Value.Properties)
			if add := sr.Value.AdditionalProperties.Schema; add != nil {
				maps.Copy(props, add.Value.Properties)
			}
		}
	} else {
		maps.Copy(props, s.Properties)
		if add := s.AdditionalProperties.Schema; add != nil {
			maps.Copy(props, add.Value.Properties)
		}
	}
	obj := map[string]any{}
	for name, prop := range props {
		vv := values[name]
		if len(vv) == 0 {
			continue
		}
		if prop.Value.Type.Is(openapi3.TypeArray) {
			obj[name] = vv
		} else {
			obj[name] = vv[0]
		}
	}
	return obj, nil
}

// decodePart decodes one part of a form as kin-openapi's form decoder
// does. A part that carries a file is judged empty: its bytes are the
// handler's to check.
func decodePart(part *FormPart, schema *openapi3.SchemaRef) (any, error) {
	data := part.Data
	if part.FileName != "" {
		data = nil
	}
	header := part.Header
	if header.Get("Content-Type") == "" {
		header = http.Header{"Content-Type": {"text/plain"}}
	}
	value, err := decodeBytes(data, header, schema)
	if err != nil {
		if pe, ok := err.(*openapi3filter.ParseError); ok {
			return nil, &openapi3filter.ParseError{Cause: pe}
		}
		return nil, fmt.Errorf("part %s: %w", part.Name, err)
	}
	if h := part.Header.Get("Content-Type"); h == "" || h == "text/plain" {
		s, _ := value.(string)
		if value, err = parsePrimitive(s, schema.Value); err != nil {
			if pe, ok := err.(*openapi3filter.ParseError); ok {
				return nil, &openapi3filter.ParseError{Cause: pe}
			}
			return nil, fmt.Errorf("part %s: %w", part.Name, err)
		}
	}
	return value, nil
}

// decodeBytes decodes a body (or a form's part) of the media type its
// header says, as kin-openapi's body decoders do: a binary string as its
// bytes, any other by the decoder registered for its media type.
func decodeBytes(data []byte, header http.Header, schema *openapi3.SchemaRef) (any, error) {
	mediaType, _, _ := strings.Cut(header.Get("Content-Type"), ";")
	mediaType = strings.ToLower(strings.TrimSpace(mediaType))
	if isBinary(schema.Value) {
		return string(data), nil
	}
	decoder := openapi3filter.RegisteredBodyDecoder(mediaType)
	if decoder == nil && strings.HasSuffix(mediaType, "+json") {
		decoder = openapi3filter.RegisteredBodyDecoder("application/json")
	}
	if decoder == nil {
		decoder = openapi3filter.RegisteredBodyDecoder("*/*")
	}
	if decoder == nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindUnsupportedFormat, Reason: fmt.Sprintf("unsupported content type %q", mediaType)}
	}
	return decoder(bytes.NewReader(data), header, schema, nil)
}

// fileCut reports whether a form ended with a file cut short.
func fileCut(f *Form) bool {
	n := len(f.Parts)
	return n > 0 && f.Parts[n-1].Err != nil && f.Parts[n-1].FileName != ""
}

func isBinary(s *openapi3.Schema) bool {
	return s != nil && s.Type.Is(openapi3.TypeString) && s.Format == "binary"
}

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
