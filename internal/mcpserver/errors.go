package mcpserver

import (
	"encoding/json"
	"fmt"
)

// The JSON-RPC and MCP error codes the server answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeHeaderMismatch: the sessionless revision's standard headers
	// (Mcp-Method, Mcp-Name) do not say what the message says.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapabilities: a request needs a client
	// capability the client did not declare.
	CodeMissingRequiredClientCapabilities = -32021
	// CodeUnsupportedProtocolVersion: a protocol revision the server does
	// not speak.
	CodeUnsupportedProtocolVersion = -32022
)

// An Error is a JSON-RPC error: what a request is answered with when it
// cannot have a result. A handler returns one to refuse a request.
type Error struct {
	Code    int64
	Message string
	// Data is the error's data as JSON, nil for none.
	Data []byte
	// html escapes <, > and & in the message, as json.Marshal does: the
	// errors of the framing itself were written so.
	html bool
	// nosniff: the answer carries X-Content-Type-Options: nosniff (the
	// transport's refusals of a message it cannot read).
	nosniff bool
}

func (e *Error) Error() string { return e.Message }

// Errorf is an Error of code with a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// methodNotFound is what a request of a method the server does not serve
// (or not in the request's revision) is answered with.
func methodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", method)}
}

// ResourceNotFound is the error of a read of a resource the server does
// not have, or that the caller may not see.
func ResourceNotFound(uri string) *Error {
	data := fmt.Appendf(nil, `{"uri":%q}`, uri) // as the official SDK words it
	if !json.Valid(data) {
		data = append(appendString([]byte(`{"uri":`), uri, false), '}')
	}
	return &Error{Code: CodeInvalidParams, Message: "Resource not found", Data: data}
}

// appendError appends a JSON-RPC error answer.
func appendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.String()...)
	dst = append(dst, `,"error":{"code":`...)
	dst = fmt.Appendf(dst, "%d", e.Code)
	dst = appendString(append(dst, `,"message":`...), e.Message, e.html)
	if e.Data != nil {
		dst = append(append(dst, `,"data":`...), e.Data...)
	}
	return append(dst, "}}"...)
}
