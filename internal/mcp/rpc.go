package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/wire"
)

// The front's one JSON-RPC path over HTTP: a POST's body is decoded once,
// here, into messages; a tool call (of either revision) is answered from
// that decoding by the front itself, as one JSON body or, when it carries
// a progress token, as server-sent events. The SDK serves the rest of the
// protocol (the handshake and sessions, the lists, the resources, batches,
// the streams a session resumes) from the same exchange, which it hands to
// the handlers as the request's token info.
//
// Measured on a loopback tools/call (BenchmarkMCPToolCall), the SDK's
// handling cost about six times the call itself in time and four times in
// memory (each of its JSON decodes of a message takes a 32 KB buffer);
// the answer is the same function either way (Front.call).

// message is one JSON-RPC message of a POST, as the front reads it: what
// routes it and journals it, and a tool call's arguments, ready to become
// the operation's request.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string    `json:"name"`
		Arguments arguments `json:"arguments"`
		URI       string    `json:"uri"`
		Meta      struct {
			ProgressToken      json.RawMessage `json:"progressToken"`
			ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
			ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
			ClientInfo         *struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// arguments are a tool call's arguments as the front reads them from a
// POST's body: each value shares the body's bytes, so a 10 MB argument is
// not copied out of the message (the operation's input is decoded from
// them, once). The body is read whole into a buffer of its own that
// nothing changes, which makes the sharing safe.
type arguments struct {
	m   map[string]json.RawMessage
	bad bool // neither an object nor null: the SDK answers such a call
}

// UnmarshalJSON implements json.Unmarshaler.
func (a *arguments) UnmarshalJSON(b []byte) error {
	switch t := bytes.TrimSpace(b); {
	case string(t) == "null":
		return nil
	case len(t) == 0 || t[0] != '{':
		a.bad = true
		return nil
	}
	var m map[string]sharedRaw
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	a.m = make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		a.m[k] = json.RawMessage(v)
	}
	return nil
}

// sharedRaw is a json.RawMessage that shares the document's bytes rather
// than copying them (see arguments).
type sharedRaw []byte

// UnmarshalJSON implements json.Unmarshaler.
func (r *sharedRaw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// progress is the call's progress token, nil without one.
func (m *message) progress() json.RawMessage {
	if t := m.Params.Meta.ProgressToken; len(t) > 0 && string(t) != "null" {
		return t
	}
	return nil
}

// body is a POST's messages.
type body struct {
	msgs  []message
	batch bool
	// odd is true when a message has a field of another type than the
	// protocol's: the SDK judges it, as it judges every message the front
	// does not answer itself.
	odd bool
}

// methods names the methods of the messages, for the journal: "response"
// for a message without one.
func (b *body) methods() string {
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
func (b *body) single() *message {
	if b.batch || len(b.msgs) != 1 {
		return nil
	}
	return &b.msgs[0]
}

// call is the body's tool call, when it is one request of a known tool
// that the front may answer.
func (b *body) call() *message {
	if m := b.single(); m != nil && !b.odd && m.Method == "tools/call" && m.JSONRPC == "2.0" && validID(m.ID) {
		return m
	}
	return nil
}

// read is the body's read of a resource, when it is one request.
func (b *body) read() *message {
	if m := b.single(); m != nil && !b.odd && m.Method == "resources/read" && m.JSONRPC == "2.0" && validID(m.ID) {
		return m
	}
	return nil
}

// named is what a message's Mcp-Name header must say: the tool or prompt
// of a call, the URI of a read; false for a method without one.
func (m *message) named() (string, bool) {
	switch m.Method {
	case "tools/call", "prompts/get":
		return m.Params.Name, true
	case "resources/read":
		return m.Params.URI, true
	}
	return "", false
}

// versionError is the answer to a request whose Mcp-Protocol-Version the
// server does not speak, whatever its date: -32022 with the versions it
// does (the sessionless revision's error, which clients of every revision
// read as a refusal of the version).
func versionError(requested string) *jsonrpc.Error {
	data, _ := json.Marshal(sdk.UnsupportedProtocolVersionData{Supported: supportedVersions, Requested: requested})
	return &jsonrpc.Error{Code: sdk.CodeUnsupportedProtocolVersion,
		Message: fmt.Sprintf("Unsupported protocol version %q: this server speaks %s.", requested, strings.Join(supportedVersions, ", ")),
		Data:    data}
}

// supportedVersions are the protocol revisions the server speaks (the
// SDK's), read once: every request's header is checked against them.
var supportedVersions = sdk.SupportedProtocolVersions()

// knownVersion reports whether the server speaks a protocol revision.
func knownVersion(v string) bool { return slices.Contains(supportedVersions, v) }

// checkHeaders holds a sessionless request to the revision's standard
// headers: Mcp-Method names the message's method, and Mcp-Name the tool,
// prompt or resource of a call or a read, in its plain or its Base64 form
// (=?base64?...?=, for names an HTTP header cannot carry as they are). A
// header missing or saying something else is -32020. The decoded name
// then stands in the header, for the SDK, which compares the header as it
// is.
func checkHeaders(h http.Header, b *body) *jsonrpc.Error {
	m := b.single()
	if m == nil || m.Method == "" || b.odd || len(m.ID) > 0 && !validID(m.ID) {
		return nil // not a message: the SDK says what is wrong with it
	}
	mismatch := func(format string, args ...any) *jsonrpc.Error {
		return &jsonrpc.Error{Code: sdk.CodeHeaderMismatch, Message: fmt.Sprintf(format, args...)}
	}
	switch method := h.Get("Mcp-Method"); {
	case method == "":
		return mismatch("Header mismatch: the Mcp-Method header is required; it names the message's method (%s).", m.Method)
	case method != m.Method:
		return mismatch("Header mismatch: the Mcp-Method header says %q, the message's method is %q.", method, m.Method)
	}
	want, ok := m.named()
	if !ok {
		return nil
	}
	raw := h.Get("Mcp-Name")
	if raw == "" {
		return mismatch("Header mismatch: a %s request needs the Mcp-Name header; it names %q.", m.Method, want)
	}
	name, ok := decodeHeader(raw)
	if !ok {
		return mismatch("Header mismatch: the Mcp-Name header %q is not valid Base64 inside =?base64?...?=.", raw)
	}
	if name != want {
		return mismatch("Header mismatch: the Mcp-Name header says %q, the message names %q.", name, want)
	}
	h.Set("Mcp-Name", name)
	return nil
}

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

// decode reads a POST's body: a message or a batch. It is the only time
// the front decodes the body; what is not JSON-RPC gets JSON-RPC's error
// (a parse error, or an invalid request: an empty batch, what is not a
// message, a message with neither method nor result nor error).
func (f *Front) decode(data []byte) (body, *jsonrpc.Error) {
	f.decodes.Add(1)
	return decodeBody(data)
}

// decodeBody reads a POST's body: a message or a batch (Front.decode).
// The skimmer reads a message of the plain shape clients send; encoding/json
// reads the rest.
func decodeBody(data []byte) (body, *jsonrpc.Error) {
	if b, ok := skimMessage(data); ok {
		return b, nil
	}
	return decodeJSON(data)
}

// decodeJSON is decodeBody through encoding/json.
func decodeJSON(data []byte) (body, *jsonrpc.Error) {
	var b body
	data = bytes.TrimSpace(data)
	var err error
	if b.batch = len(data) > 0 && data[0] == '['; b.batch {
		err = json.Unmarshal(data, &b.msgs)
	} else {
		b.msgs = make([]message, 1)
		err = json.Unmarshal(data, &b.msgs[0])
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(data) == 0 || errors.As(err, &syntax):
		return b, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: the message is not one JSON value."}
	case b.batch && (len(b.msgs) == 0 || errors.As(err, &typ) && typ.Field == ""):
		return b, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid request: an empty batch, or a batch of what are not messages."}
	case errors.As(err, &typ) && (typ.Field == "" || typ.Field == "method"):
		return b, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid request: the message is not a JSON-RPC object."}
	case err != nil:
		b.odd = true
	}
	for _, m := range b.msgs {
		b.odd = b.odd || m.Params.Arguments.bad
	}
	for _, m := range b.msgs {
		if m.Method == "" && m.Result == nil && m.Error == nil {
			return b, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid request: a message without a method is a response, and carries a result or an error."}
		}
	}
	return b, nil
}

// answers reports whether the front answers a tool call itself: a call of
// a known tool, sessionless with its headers and _meta as the revision
// requires (the SDK answers the errors of those that are not), or of a
// session of the caller's workspace that no stream-drop fault may meet (a
// session resumes a dropped stream from the events the SDK keeps).
func (f *Front) answers(r *http.Request, m *message, stateless bool, ws uint64) bool {
	if f.toolNamed(m.Params.Name) == nil {
		return false
	}
	jsonOK, streamOK := accepts(r)
	if m.progress() != nil {
		jsonOK = streamOK
	}
	if !stateless {
		session := r.Header.Get("Mcp-Session-Id")
		return jsonOK && session != "" && r.Header.Get(fault.Header) == "" && !f.env.Rules.HasKind(fault.MCPStreamDrop) && f.owns(session, ws)
	}
	return jsonOK && streamOK && sessionless(r, m)
}

// sessionless reports whether a request is one the sessionless revision
// lets the front answer itself: its headers (checked by checkHeaders) and
// its _meta as the revision requires. The SDK answers the errors of those
// that are not.
func sessionless(r *http.Request, m *message) bool {
	meta := &m.Params.Meta
	name, _ := m.named()
	return r.Header.Get("Mcp-Protocol-Version") == sessionlessVersion &&
		r.Header.Get("Mcp-Method") == m.Method && r.Header.Get("Mcp-Name") == name &&
		mediaType(r.Header.Get("Content-Type")) == "application/json" &&
		meta.ProtocolVersion == sessionlessVersion && bytes.HasPrefix(meta.ClientCapabilities, []byte("{"))
}

// serveCall answers a tool call the front answers itself (answers).
func (f *Front) serveCall(w *edge.Writer, r *http.Request, x *exchange, m *message, stateless bool) {
	t := f.toolNamed(m.Params.Name)
	tc := toolCall{tool: t, args: m.Params.Arguments.m, drop: w.Abort}
	var events *eventStream
	if token := m.progress(); token != nil {
		events = &eventStream{w: w}
		tc.progress = progress(func(p, total float64, status string) {
			events.send(progressMessage(token, p, total, status))
		})
	}
	res, release := f.invoke(r.Context(), tc, x.caller())
	answer := resultMessage(m.ID, res, stateless)
	release() // the answer holds a copy of the operation's body
	// The edge copies what is written (the connection's buffer, the
	// journal's capture, an answer held for a fault): the answer's buffer
	// goes back to the pool once written.
	defer wire.ReleasePage(wire.RawJSON(answer))
	if events != nil {
		events.send(answer)
		return
	}
	if stateless {
		w.Header().Set("Cache-Control", "no-cache, no-transform")
	}
	edge.WriteRaw(w, http.StatusOK, answer)
}

// serverMeta is the _meta of a sessionless result: the server names
// itself in every one.
// Made on first use, after SetVersion.
var serverMeta = sync.OnceValue(func() []byte {
	impl, _ := json.Marshal(Implementation)
	return append(append([]byte(`{"`+sdk.MetaKeyServerInfo+`":`), impl...), '}')
})

// resultMessage is a tool call's answer as the SDK writes it (_meta and
// resultType in the sessionless revision; content, structuredContent,
// isError), with the structured content spliced in as it is: it is the
// operation's own JSON body, which marshalling would copy and compact
// again.
//
// Its buffer is of the pool of list pages (wire.PageBuffer): the caller
// may give it back once it has been written.
func resultMessage(id json.RawMessage, res *sdk.CallToolResult, stateless bool) []byte {
	content, ok := textContent(res.Content)
	if !ok {
		var err error
		if content, err = json.Marshal(res.Content); err != nil {
			return errorMessage(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		}
	}
	data, _ := res.StructuredContent.(json.RawMessage)
	b := wire.PageBuffer(len(content) + len(data) + len(id) + len(serverMeta()) + 128)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":{`...)
	if stateless {
		b = append(append(append(b, `"_meta":`...), serverMeta()...), ',')
	}
	b = append(append(b, `"content":`...), content...)
	if len(data) > 0 {
		b = append(append(b, `,"structuredContent":`...), data...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if stateless {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, "}}"...)
}

// textContent writes content made of plain text alone as json.Marshal
// writes it (the SDK's wire form of a TextContent: type and text, no
// _meta, no annotations); ok is false for any other, and for a text with
// a character that JSON escapes, which json.Marshal then writes.
func textContent(content []sdk.Content) (_ []byte, ok bool) {
	size := 2
	for _, c := range content {
		t, isText := c.(*sdk.TextContent)
		if !isText || t.Meta != nil || t.Annotations != nil || !plainText(t.Text) {
			return nil, false
		}
		size += len(t.Text) + len(`{"type":"text","text":""},`)
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, c := range content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, `{"type":"text","text":"`...), c.(*sdk.TextContent).Text...), `"}`...)
	}
	return append(b, ']'), true
}

// plainText reports whether JSON writes a text as it is: printable ASCII
// without a quote, a backslash, or a character that encoding/json escapes
// for HTML (<, >, &).
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// progressMessage is a progress notification, as the SDK writes it.
func progressMessage(token json.RawMessage, p, total float64, status string) []byte {
	msg, _ := json.Marshal(status)
	b := make([]byte, 0, 128)
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, token...)
	b = append(append(b, `,"message":`...), msg...)
	b = strconv.AppendFloat(append(b, `,"progress":`...), p, 'g', -1, 64)
	b = strconv.AppendFloat(append(b, `,"total":`...), total, 'g', -1, 64)
	return append(b, "}}"...)
}

// eventStream answers a call as server-sent events: its progress
// notifications, then its result. The head goes with the first event, so
// that the call has put its rate window on it.
type eventStream struct {
	w       *edge.Writer
	mu      sync.Mutex
	started bool
}

func (s *eventStream) send(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
		s.w.WriteHeader(http.StatusOK)
	}
	buf := make([]byte, 0, len(msg)+24)
	buf = append(append(append(buf, "event: message\ndata: "...), msg...), "\n\n"...)
	s.w.Write(buf)
	s.w.FlushError()
}

// accepts reports whether a POST's Accept header takes a JSON answer, and
// an event stream.
func accepts(r *http.Request) (jsonOK, streamOK bool) {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			media, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(media) {
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

// acceptsJSON reports whether a POST's Accept header takes a JSON answer.
func acceptsJSON(r *http.Request) bool {
	ok, _ := accepts(r)
	return ok
}

// mediaType is a Content-Type's media type, "" when it is not one.
func mediaType(v string) string {
	if v == "application/json" {
		return v // what nearly every request says: no parameters to parse
	}
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

// validID reports whether a request id is one JSON-RPC allows: a string or
// a number.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	// What decoding it as a string or a json.Number accepts, read by the
	// skimmer without decoding.
	s := skimmer{b: id}
	switch id[0] {
	case '"':
		s.skipStr()
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.number()
	default:
		return false
	}
	s.ws()
	return !s.failed && s.i == len(id)
}

// writeRPCError answers a request with a JSON-RPC error, as a JSON body
// with HTTP status 200: the request was one, and JSON-RPC refused it.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, err error) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	edge.WriteRaw(w, http.StatusOK, errorMessage(id, rpcErr))
}

// checkRevision judges a POST's protocol revision, for both MCP servers: a
// revision the server does not speak is refused whatever its date, on
// every request (400, -32022); the sessionless revision's standard headers
// must say what the message says (400, -32020). stateless tells whether
// the request is of the sessionless revision; ok is false once the error
// is written.
func checkRevision(w http.ResponseWriter, r *http.Request, id json.RawMessage, msgs *body) (stateless, ok bool) {
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != "" && !knownVersion(version) {
		edge.WriteRaw(w, http.StatusBadRequest, errorMessage(id, versionError(version)))
		return false, false
	}
	stateless = version >= sessionlessVersion
	if stateless {
		if err := checkHeaders(r.Header, msgs); err != nil {
			edge.WriteRaw(w, http.StatusBadRequest, errorMessage(id, err))
			return true, false
		}
	}
	return stateless, true
}
