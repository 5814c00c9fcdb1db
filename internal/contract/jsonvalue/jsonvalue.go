// Package jsonvalue decodes a JSON document into the value encoding/json
// makes of it in an any (maps, slices, float64, string, bool, nil), the
// value the contract validates a request's body as. It is a shortcut beside
// its plain fallback, json.Unmarshal, which it gives the same values and
// errors (FuzzDecode holds it to that), and which it calls for any document
// that is not valid JSON or holds a number float64 cannot hold.
//
// It earns its place by its benchmark (BenchmarkDecode): a string without
// escapes shares the document's bytes instead of being copied (an upload's
// 10 MB data URI is not held twice: about 400 B allocated against 10 MB),
// and a creation's body decodes in about half the time, with 8
// allocations against 19. Its Reader reads a document part by part, for
// the contract's decode that keeps no more of a refused body than its
// error lists.
package jsonvalue

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Decode decodes a JSON document as json.Unmarshal does into an any. A
// string without escapes (a value or a member's name) shares the
// document's bytes instead of being copied: a 10 MB data URI is judged
// without a second 10 MB string. data must not change while the value is
// in use; a request body read whole does not.
//
// A document that is not valid JSON, or holds a number float64 cannot
// hold, is decoded by json.Unmarshal, for its errors.
func Decode(data []byte) (any, error) {
	r, err := NewReader(data)
	if err != nil {
		return nil, err
	}
	v := r.Value()
	if r.Err() != nil {
		var v any
		return v, json.Unmarshal(data, &v)
	}
	return v, nil
}

// A Reader reads a JSON document value by value, for a caller that keeps
// only part of it (the contract, which reads past what a schema refuses
// and keeps no more of it than an error lists): Value decodes the next
// value whole, as Decode does; Skip reads past it; Object and Array read
// a container member by member, item by item, the caller reading each.
// Strings without escapes share the document's bytes, as Decode's do.
type Reader struct {
	data []byte
	off  int
	bad  string // the first number float64 cannot hold
}

// NewReader returns a reader of the document data; the error is
// json.Unmarshal's when data is not one JSON value.
func NewReader(data []byte) (*Reader, error) {
	if !json.Valid(data) {
		var v any
		return nil, json.Unmarshal(data, &v)
	}
	return &Reader{data: data}, nil
}

// Err is the error json.Unmarshal gives the document, once it has been
// read: the first number float64 cannot hold (read by Value or Skip),
// or nil.
func (r *Reader) Err() error {
	if r.bad == "" {
		return nil
	}
	var v any
	return json.Unmarshal([]byte(r.bad), &v)
}

func (r *Reader) space() {
	for r.off < len(r.data) {
		switch r.data[r.off] {
		case ' ', '\t', '\n', '\r':
			r.off++
		default:
			return
		}
	}
}

// Kind is the kind of the next value: '{', '[', '"', '0' (a number), 't',
// 'f' or 'n'.
func (r *Reader) Kind() byte {
	r.space()
	switch c := r.data[r.off]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	}
	return '0'
}

// Value decodes the next value, as json.Unmarshal decodes one into an any
// (a number float64 cannot hold is nil, and Err's).
func (r *Reader) Value() any {
	switch r.Kind() {
	case '{':
		m := map[string]any{}
		r.Object(func(name string) { m[name] = r.Value() })
		return m
	case '[':
		s := []any{}
		r.Array(func() { s = append(s, r.Value()) })
		return s
	case '"':
		return r.str()
	case 't':
		r.off += 4
		return true
	case 'f':
		r.off += 5
		return false
	case 'n':
		r.off += 4
		return nil
	}
	return r.number()
}

// Skip reads past the next value, keeping nothing of it but the error of
// a number float64 cannot hold.
func (r *Reader) Skip() {
	switch r.Kind() {
	case '{':
		r.Object(func(string) { r.Skip() })
	case '[':
		r.Array(r.Skip)
	case '"':
		r.skipString()
	case 't', 'n':
		r.off += 4
	case 'f':
		r.off += 5
	default:
		r.number()
	}
}

// Object reads the object that is next: member is called with each
// member's name, in order, and must read its value (Value, Skip, Object,
// Array). A name without escapes shares the document's bytes.
func (r *Reader) Object(member func(name string)) {
	r.space()
	r.off++ // '{'
	for {
		r.space()
		switch r.data[r.off] {
		case '}':
			r.off++
			return
		case ',':
			r.off++
			r.space()
		}
		name := r.str()
		r.space()
		r.off++ // ':'
		member(name)
		r.space()
	}
}

// Array reads the array that is next: item is called for each item, in
// order, and must read it.
func (r *Reader) Array(item func()) {
	r.space()
	r.off++ // '['
	for {
		r.space()
		switch r.data[r.off] {
		case ']':
			r.off++
			return
		case ',':
			r.off++
		}
		item()
		r.space()
	}
}

// number decodes the number at the offset; nil, and the document's error,
// when float64 cannot hold it.
func (r *Reader) number() any {
	start := r.off
	for r.off < len(r.data) {
		switch r.data[r.off] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			goto end
		}
		r.off++
	}
end:
	f, err := strconv.ParseFloat(unsafe.String(&r.data[start], r.off-start), 64)
	if err != nil {
		if r.bad == "" {
			r.bad = string(r.data[start:r.off])
		}
		return nil
	}
	return f
}

// skipString reads past the string at the offset.
func (r *Reader) skipString() {
	r.off++
	for {
		switch r.data[r.off] {
		case '"':
			r.off++
			return
		case '\\':
			r.off++ // the escaped character; \uXXXX's digits follow as plain bytes
		}
		r.off++
	}
}

// str decodes the string at the offset. A string without escapes, in
// valid UTF-8, shares the document's bytes; any other is unquoted as
// encoding/json does (escapes, invalid UTF-8 replaced).
func (r *Reader) str() string {
	start := r.off
	r.off++
	plain := true
	for {
		c := r.data[r.off]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			r.off++ // the escaped character; \uXXXX's digits follow as plain bytes
		}
		r.off++
	}
	r.off++
	lit := r.data[start:r.off]
	inner := lit[1 : len(lit)-1]
	if plain && utf8.Valid(inner) {
		if len(inner) == 0 {
			return ""
		}
		return unsafe.String(&inner[0], len(inner))
	}
	var s string
	_ = json.Unmarshal(lit, &s) // valid: json.Valid accepted the document
	return s
}
