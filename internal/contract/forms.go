package contract

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// Bodies that are not JSON: a multipart form's fields and a binary body,
// decoded as kin-openapi's body decoders make values of them.

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
