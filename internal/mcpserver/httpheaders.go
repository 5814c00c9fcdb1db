package mcpserver

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// The headers of the Streamable HTTP transport: the sessionless
// revision's Mcp-Method and Mcp-Name, Accept and Content-Type.

// checkHeaders holds a sessionless request to the revision's standard
// headers: Mcp-Method names the message's method, and Mcp-Name the tool or
// prompt of a call, the URI of a read, in its plain or its Base64 form
// (=?base64?...?=, for names an HTTP header cannot carry as they are). A
// header missing or saying something else is -32020. name is the
// Mcp-Name, decoded.
func checkHeaders(h http.Header, b *body, name *string) *Error {
	*name = h.Get("Mcp-Name")
	m := b.single()
	if m == nil || m.Method == "" || odd(m) {
		return nil // the transport's own checks say what is wrong with it
	}
	mismatch := func(format string, args ...any) *Error {
		return &Error{Code: CodeHeaderMismatch, Message: fmt.Sprintf(format, args...), html: true}
	}
	switch method := h.Get("Mcp-Method"); {
	case method == "":
		return mismatch("Header mismatch: the Mcp-Method header is required; it names the message's method (%s).", m.Method)
	case method != m.Method:
		return mismatch("Header mismatch: the Mcp-Method header says %q, the message's method is %q.", method, m.Method)
	}
	want, ok := named(m)
	if !ok {
		return nil
	}
	raw := h.Get("Mcp-Name")
	if raw == "" {
		return mismatch("Header mismatch: a %s request needs the Mcp-Name header; it names %q.", m.Method, want)
	}
	decoded, ok := decodeHeader(raw)
	if !ok {
		return mismatch("Header mismatch: the Mcp-Name header %q is not valid Base64 inside =?base64?...?=.", raw)
	}
	if decoded != want {
		return mismatch("Header mismatch: the Mcp-Name header says %q, the message names %q.", decoded, want)
	}
	*name = decoded
	return nil
}

// named is what a message's Mcp-Name header must say: the tool or prompt
// of a call, the URI of a read; false for a method without one.
func named(m *Message) (string, bool) {
	switch m.Method {
	case "tools/call", "prompts/get":
		return m.p.name, true
	case "resources/read":
		return m.p.uri, true
	}
	return "", false
}

// nameOf reads the name a message's Mcp-Name must say: false when its
// params are not those of its method.
func nameOf(m *Message) (string, bool) {
	name, _ := named(m)
	return name, m.paramsErr == nil
}

// odd reports whether a message's params have a member of another type
// than the protocol's (the transport's checks answer it, not the standard
// headers').
func odd(m *Message) bool { return m.odd }

// decodeHeader reads a standard header's value: as it is, or the text of
// its Base64 form.
func decodeHeader(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	if inner, ok = strings.CutSuffix(inner, "?="); !ok {
		return v, true
	}
	text, err := base64.StdEncoding.DecodeString(inner)
	return string(text), err == nil
}

// accepts reports whether an Accept header takes a JSON answer, and an
// event stream.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for part := range strings.SplitSeq(value, ",") {
			media, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(media)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// mediaType is a Content-Type's media type, "" when it is not one.
func mediaType(v string) string {
	if v == "application/json" {
		return v
	}
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}
