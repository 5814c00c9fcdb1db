package mcpserver

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// ID is a request's id as the server writes it back: a JSON string or
// integer. The zero ID is none (a notification, or an id the server could
// not read: JSON null on the wire).
type ID struct{ raw string }

// IsValid reports whether the id is one.
func (id ID) IsValid() bool { return id.raw != "" }

// String is the id as JSON: null when there is none.
func (id ID) String() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// A Message is one JSON-RPC message as the server reads it: its envelope,
// with its params left as sent, each decoded by the method that takes them.
type Message struct {
	ID     ID
	Method string
	// Params are the params as sent; nil when absent.
	Params jsontext.Value
	// request is true when the message has a method (a request or a
	// notification); false for a response, which the server takes and
	// ignores (it sends no requests).
	request bool

	// What its params say, read once (readParams).
	p         params
	meta      meta
	paramsErr *Error // how the params fail the method's type, nil when they do not
	odd       bool   // a member is of another type than the protocol's
}

// IsCall reports whether the message is a request that awaits an answer.
func (m *Message) IsCall() bool { return m.request && m.ID.IsValid() }

// A body is what one POST or one line of stdio carries: a message or a
// batch.
type body struct {
	msgs  []Message
	batch bool
}

// methods names the methods of a body's messages, for a journal:
// "response" for a message without one.
func (b *body) methods() string {
	switch len(b.msgs) {
	case 0:
		return ""
	case 1:
		if b.msgs[0].Method == "" {
			return "response"
		}
		return b.msgs[0].Method
	}
	names := make([]string, len(b.msgs))
	for i, m := range b.msgs {
		names[i] = m.Method
		if names[i] == "" {
			names[i] = "response"
		}
	}
	return strings.Join(names, ",")
}

// single is the body's one message, nil for a batch.
func (b *body) single() *Message {
	if b.batch || len(b.msgs) != 1 {
		return nil
	}
	return &b.msgs[0]
}

// reading is how a body is read: the errors over HTTP and over stdio are
// worded apart (as clients of each have seen them).
type reading int

const (
	overHTTP reading = iota
	overStdio
)

// decodeOptions read JSON as encoding/json does: a name given twice takes
// its last value, invalid UTF-8 is let through (each byte read as U+FFFD).
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// decoders are reused: a decoder over a bytes.Buffer reads the buffer's
// bytes in place, so that the values it returns share the body's bytes.
var decoders = sync.Pool{New: func() any { return &decoder{dec: jsontext.NewDecoder(&bytes.Buffer{})} }}

type decoder struct {
	buf bytes.Buffer
	dec *jsontext.Decoder
}

func getDecoder(data []byte) *decoder {
	d := decoders.Get().(*decoder)
	d.buf = *bytes.NewBuffer(data)
	d.dec.Reset(&d.buf, decodeOptions...)
	return d
}

func (d *decoder) release() {
	if d.buf.Cap() > 64<<10 {
		// A large body is not held by a decoder waiting in the pool.
		d.buf = bytes.Buffer{}
		d.dec.Reset(&d.buf)
	}
	decoders.Put(d)
}

// decodeBody reads a message or a batch. The values it returns share data,
// which must not change while they are in use.
//
// What is not one JSON value is a parse error; an empty batch, a batch
// of what are not objects, what is not a JSON-RPC message (a version other
// than 2.0, an id that is neither a string nor a number, a response
// without an id, result or error) are invalid requests.
func decodeBody(data []byte, how reading) (body, *Error) {
	d := getDecoder(data)
	defer d.release()
	var b body
	dec := d.dec
	switch dec.PeekKind() {
	case '[':
		b.batch = true
		if _, err := dec.ReadToken(); err != nil {
			return b, parseError()
		}
		for dec.PeekKind() != ']' {
			if dec.PeekKind() == 0 {
				_, err := dec.ReadToken()
				return b, syntaxOr(err, nil)
			}
			v, err := dec.ReadValue()
			if err != nil {
				return b, parseError()
			}
			b.msgs = append(b.msgs, Message{})
			if rpcErr := decodeMessage(v, &b.msgs[len(b.msgs)-1], how, true); rpcErr != nil {
				// The rest must still be JSON for this to be the error.
				if rest := restIsJSON(dec); rest != nil {
					return b, rest
				}
				return b, rpcErr
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return b, parseError()
		}
		if err := atEnd(dec); err != nil {
			return b, err
		}
		if len(b.msgs) == 0 {
			if how == overStdio {
				return b, invalidRequest("Invalid request: an empty batch.")
			}
			return b, invalidRequest("Invalid request: an empty batch, or a batch of what are not messages.")
		}
		return b, nil
	case 0:
		_, err := dec.ReadValue()
		return b, syntaxOr(err, nil)
	}
	b.msgs = make([]Message, 1)
	if dec.PeekKind() == '{' {
		// One message, read where it stands.
		rpcErr, err := readMessage(dec, data, &b.msgs[0], how)
		if err != nil {
			return b, parseError()
		}
		if err := atEnd(dec); err != nil {
			return b, err
		}
		return b, rpcErr
	}
	v, err := dec.ReadValue()
	if err != nil {
		return b, parseError()
	}
	if err := atEnd(dec); err != nil {
		return b, err
	}
	return b, decodeMessage(v, &b.msgs[0], how, false)
}

// restIsJSON reads what is left of a batch: a parse error when it is not
// JSON, which JSON-RPC answers before anything else.
func restIsJSON(dec *jsontext.Decoder) *Error {
	for dec.StackDepth() > 0 {
		if _, err := dec.ReadToken(); err != nil {
			return parseError()
		}
	}
	return atEnd(dec)
}

func atEnd(dec *jsontext.Decoder) *Error {
	if _, err := dec.ReadValue(); err != io.EOF {
		return parseError()
	}
	return nil
}

func syntaxOr(err error, otherwise *Error) *Error {
	if err != nil {
		return parseError()
	}
	return otherwise
}

func parseError() *Error {
	return &Error{Code: CodeParseError, Message: "Parse error: the message is not one JSON value."}
}

func invalidRequest(message string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: message}
}

// malformed is a message JSON-RPC cannot read, worded as its reader says.
func malformed(reason string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "Invalid request: " + reason + ".", nosniff: true}
}

// decodeMessage reads one message of a body: v is one complete JSON value.
func decodeMessage(v jsontext.Value, m *Message, how reading, inBatch bool) *Error {
	if v.Kind() != '{' {
		if how == overHTTP {
			if inBatch {
				return invalidRequest("Invalid request: an empty batch, or a batch of what are not messages.")
			}
			return invalidRequest("Invalid request: the message is not a JSON-RPC object.")
		}
		return malformed("unmarshaling jsonrpc message: " + typeMismatch(v, "", "jsonrpc2.wireDecode"))
	}
	d := getDecoder(v)
	defer d.release()
	rpcErr, err := readMessage(d.dec, v, m, how)
	if err != nil {
		return parseError()
	}
	return rpcErr
}

// readMessage reads a message from dec, which stands at its '{' and reads
// data: the message's envelope, and its params in the same pass (when its
// method came before them, as clients write it). A syntax error is
// returned apart: the message is no JSON, whatever else it is.
func readMessage(dec *jsontext.Decoder, data []byte, m *Message, how reading) (*Error, error) {
	if _, err := dec.ReadToken(); err != nil { // {
		return nil, err
	}
	var version, id, method, result, errv jsontext.Value
	var firstBadType string // the first member of another type than the envelope's, as the SDK's reader stops at it
	paramsRead := false
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		key := string(nameBytes(name))
		if key == "params" && method.Kind() == '"' && dec.PeekKind() == '{' {
			// The params of a method known: read where they stand.
			start := valueStart(data, dec.InputOffset())
			m.Method = internMethod(method)
			if err := m.readParamsFrom(dec, data); err != nil {
				return nil, err
			}
			m.Params, paramsRead = jsontext.Value(data[start:dec.InputOffset()]), true
			continue
		}
		value, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		switch key {
		case "jsonrpc":
			version = value
			if value.Kind() != '"' && value.Kind() != 'n' && firstBadType == "" {
				firstBadType = typeMismatch(value, "jsonrpc", "jsonrpc2.wireDecode")
			}
		case "id":
			id = value
			if value.Kind() == '0' && firstBadType == "" {
				if _, err := strconv.ParseFloat(string(value), 64); err != nil {
					firstBadType = typeMismatchOf(value, "id", "jsonrpc2.wireDecode", "float64")
				}
			}
		case "method":
			if string(value) != string(method) {
				paramsRead = false // read for another method
			}
			method = value
		case "params":
			m.Params, paramsRead = value, false
		case "result":
			result = value
		case "error":
			errv = value
		}
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return nil, err
	}
	return m.envelope(version, id, method, result, errv, firstBadType, paramsRead, how), nil
}

// valueStart is where the value after a name that ends at off begins: past
// the colon and white space.
func valueStart(data []byte, off int64) int {
	i := int(off)
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r' || data[i] == ':') {
		i++
	}
	return i
}

// envelope judges a message's envelope, read: what JSON-RPC refuses, and
// then its params (unless they were read already).
func (m *Message) envelope(version, id, method, result, errv jsontext.Value, firstBadType string, paramsRead bool, how reading) *Error {
	methodNull := method != nil && method.Kind() == 'n'
	methodOK := method == nil || methodNull || method.Kind() == '"'
	if how == overHTTP {
		// Read first as encoding/json reads the envelope.
		if !methodOK {
			return invalidRequest("Invalid request: the message is not a JSON-RPC object.")
		}
		if (method == nil || methodNull || string(method) == `""`) && result == nil && errv == nil {
			return invalidRequest("Invalid request: a message without a method is a response, and carries a result or an error.")
		}
	}
	if firstBadType != "" {
		return malformed("unmarshaling jsonrpc message: " + firstBadType)
	}
	if v := unquoted(version); v != "2.0" {
		return malformed(fmt.Sprintf("invalid message version tag %q; expected %q", v, "2.0"))
	}
	var err *Error
	if m.ID, err = readID(id); err != nil {
		return err
	}
	if method != nil {
		if !methodOK {
			return malformed("unmarshaling jsonrpc message: " + typeMismatch(method, "", "string"))
		}
		m.Method, m.request = internMethod(method), true
		if paramsRead {
			return nil
		}
		if m.Params != nil {
			m.readParams()
		} else if spec, ok := methodParams[m.Method]; ok && !spec.optional {
			m.readParams() // the error of params that are missing
		}
		return nil
	}
	if !m.ID.IsValid() {
		return malformed("invalid request")
	}
	if how == overStdio && result == nil && errv == nil {
		return invalidRequest("Invalid request: a message with an id and no method is a response, and carries a result or an error.")
	}
	return nil
}

// readID reads a request's id: a string or a number (an integer: JSON-RPC
// ids carry no fraction, and the server reads them as the official SDKs
// do); null or absent is none.
func readID(v jsontext.Value) (ID, *Error) {
	switch v.Kind() {
	case 0, 'n':
		return ID{}, nil
	case '"':
		if plainASCII(v[1 : len(v)-1]) {
			return ID{raw: string(v)}, nil // as it would be written again
		}
		return ID{raw: string(appendString(nil, unquoted(v), false))}, nil
	case '0':
		if len(v) <= 15 && plainInteger(v) {
			return ID{raw: string(v)}, nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return ID{}, malformed("unmarshaling jsonrpc message: " + typeMismatchOf(v, "id", "jsonrpc2.wireDecode", "float64"))
		}
		return ID{raw: strconv.FormatInt(int64(f), 10)}, nil
	case 't', 'f':
		return ID{}, malformed("parse error: invalid ID type bool")
	case '{':
		return ID{}, malformed("parse error: invalid ID type map[string]interface {}")
	default:
		return ID{}, malformed("parse error: invalid ID type []interface {}")
	}
}

// unquoted is a JSON string's text ("" for what is not a string), as
// encoding/json reads it: each byte of invalid UTF-8 is U+FFFD.
func unquoted(v jsontext.Value) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if utf8.Valid(inner) {
			return string(inner)
		}
		return validUTF8(inner)
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		// Invalid UTF-8 beside an escape: unquote what is valid.
		s, err = jsontext.AppendUnquote(nil, append(append([]byte{'"'}, validUTF8(inner)...), '"'))
		if err != nil {
			return validUTF8(inner)
		}
	}
	return string(s)
}

// validUTF8 replaces each byte of invalid UTF-8 with U+FFFD.
func validUTF8(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// typeMismatch words a value of the wrong type as the official SDK's JSON
// reader does: into a struct's field (field set) or a whole value.
func typeMismatch(v jsontext.Value, field, into string) string {
	return typeMismatchOf(v, field, into, "")
}

func typeMismatchOf(v jsontext.Value, field, strct, typ string) string {
	value := string(v)
	if len(value) >= 32 {
		value = value[:32] + "..."
	}
	if v.Kind() == '0' && field != "" && typ == "float64" {
		return fmt.Sprintf("json: cannot unmarshal %q into Go struct field %s.%s of type %s", value, strct, field, typ)
	}
	if field == "" {
		return fmt.Sprintf("json: cannot unmarshal %q into Go value of type %s", value, strct)
	}
	if typ == "" {
		typ = "string"
	}
	return fmt.Sprintf("json: cannot unmarshal %q into Go struct field %s.%s of type %s", value, strct, field, typ)
}

// EachMember reads a JSON object's members in order, each name as sent
// (quoted, its escapes as they are) and each value sharing v's bytes; false
// when v is not an object. Reading them keeps nothing: a tool's arguments
// of a million members cost no more than their bytes.
func EachMember(v jsontext.Value, each func(name, value jsontext.Value)) bool {
	if v.Kind() != '{' {
		return false
	}
	d := getDecoder(v)
	defer d.release()
	dec := d.dec
	dec.ReadToken()
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return false
		}
		value, err := dec.ReadValue()
		if err != nil {
			return false
		}
		each(name, value)
	}
	return true
}

// Unquote is the text of a JSON string as sent (a member's name), without
// a copy when it has no escape: it shares the string's bytes then, and
// must be copied to be kept.
func Unquote(v jsontext.Value) []byte { return nameBytes(v) }

// plainASCII reports whether a string's bytes are written back as they
// are: printable ASCII without a quote or a backslash.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainInteger reports whether a number is an integer written as an int64
// writes it: digits, an optional minus, no leading zero, not -0.
func plainInteger(b []byte) bool {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if len(digits) > 0 && digits[0] == '0' {
			return false
		}
	}
	if len(digits) == 0 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// methods are the methods the server reads, named without a copy.
var methods = func() map[string]string {
	m := map[string]string{}
	for name := range methodParams {
		m[name] = name
	}
	return m
}()

// internMethod is a method's name.
func internMethod(v jsontext.Value) string {
	if name, ok := methods[string(nameBytes(v))]; ok {
		return name
	}
	return unquoted(v)
}

// nameBytes is a JSON string's text, without a copy when it has no
// escape.
func nameBytes(v jsontext.Value) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	return []byte(unquoted(v))
}

// members reads a JSON object's members, each value sharing v's bytes; ok
// is false when v is not an object. A name shares v's bytes too unless it
// has an escape: it must not be kept.
func members(v jsontext.Value, each func(name []byte, value jsontext.Value)) bool {
	if v.Kind() != '{' {
		return false
	}
	d := getDecoder(v)
	defer d.release()
	dec := d.dec
	dec.ReadToken()
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return false
		}
		value, err := dec.ReadValue()
		if err != nil {
			return false
		}
		each(nameBytes(name), value)
	}
	return true
}
