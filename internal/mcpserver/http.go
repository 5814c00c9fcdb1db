package mcpserver

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The Streamable HTTP transport. The handshake-era revisions (up to
// 2025-11-25) speak in sessions (Mcp-Session-Id), the sessionless one
// (2026-07-28) in requests that stand alone, each naming its revision and
// method in headers. A POST carries a message or (before 2025-06-18) a
// batch, and is answered as one JSON body or as server-sent events; a
// session's GET opens its stream for the server, or resumes a POST's
// (Last-Event-ID); DELETE ends a session.

// streamRetry is the reconnection delay a dropped stream's close event
// asks of the client.
const streamRetry = 10 * time.Millisecond

// ServeHTTP serves a request of the Streamable HTTP transport (Serve,
// with the request's context).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.Serve(r.Context(), w, r) }

// Serve serves a request of the Streamable HTTP transport that the front
// has admitted (its host, its credential), with ctx in place of its
// context: ctx carries the front's identity of the caller to the
// handlers, and its owner (Options.Owner).
func (s *Server) Serve(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	x := &exchange{s: s, ctx: ctx, w: w, r: r}
	x.b = &x.body
	if r.Method == http.MethodPost {
		data, err := readBody(r)
		if err != nil {
			s.httpError(w, err)
			return
		}
		var rerr *Error
		x.body, rerr = decodeBody(data, overHTTP)
		if s.opts.Received != nil {
			s.opts.Received(ctx, x.body.methods())
		}
		if rerr != nil {
			rerr.html = true
			writeRaw(w, http.StatusBadRequest, appendError(nil, ID{}, rerr), rerr.nosniff)
			return
		}
	}
	var id ID
	single := x.body.single()
	if single != nil {
		id = single.ID
	}
	// A revision the server does not speak is refused whatever its date,
	// on every request.
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != "" && !Speaks(version) {
		writeRaw(w, http.StatusBadRequest, appendError(nil, id, versionError(version)), false)
		return
	}
	x.version, x.sessionless = version, version == Sessionless
	if x.sessionless {
		if err := checkHeaders(r.Header, x.b, &x.name); err != nil {
			writeRaw(w, http.StatusBadRequest, appendError(nil, id, err), false)
			return
		}
		x.serveSessionless()
		return
	}
	x.serveSessions()
}

// versionError refuses a revision the server does not speak: -32022 with
// the ones it does.
func versionError(requested string) *Error {
	return &Error{Code: CodeUnsupportedProtocolVersion, html: true,
		Message: fmt.Sprintf("Unsupported protocol version %q: this server speaks %s.", requested, strings.Join(Versions, ", ")),
		Data:    versionData(Versions, requested)}
}

// readBody reads a POST's body into one buffer of the declared size: a
// growing buffer would leave copies of a large message behind.
func readBody(r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength < 1<<30 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}

func (s *Server) httpError(w http.ResponseWriter, err error) {
	if s.opts.HTTPError != nil {
		s.opts.HTTPError(w, err)
		return
	}
	status := http.StatusBadRequest
	if te, ok := err.(*TransportError); ok {
		status = te.Status
	}
	http.Error(w, err.Error(), status)
}

func (x *exchange) refuse(status int, message string) {
	x.s.httpError(x.w, &TransportError{Status: status, Message: message})
}

// writeRaw answers with a JSON body of a known length.
func writeRaw(w http.ResponseWriter, status int, body []byte, nosniff bool) {
	h := w.Header()
	if nosniff {
		h.Set("X-Content-Type-Options", "nosniff")
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

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

// An exchange is one HTTP request being served.
type exchange struct {
	s           *Server
	ctx         context.Context
	w           http.ResponseWriter
	r           *http.Request
	b           *body // the POST's messages: &body
	body        body
	version     string // Mcp-Protocol-Version
	sessionless bool
	name        string // Mcp-Name, decoded
	sess        *session
	opened      bool // the request opens sess (initialize)
	peer        *peer
	own         peer // the peer of a sessionless request
}

// serveSessionless serves a request of the sessionless revision.
func (x *exchange) serveSessionless() {
	r := x.r
	if r.Method != http.MethodPost {
		x.w.Header().Set("Allow", "POST")
		x.refuse(http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		x.refuse(http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'")
		return
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	if m := x.b.single(); m != nil && m.Method == "resources/read" && x.s.opts.DirectReads {
		streamOK = true // a read answers as JSON alone
	}
	if !jsonOK || !streamOK {
		x.refuse(http.StatusBadRequest, "Accept must contain both 'application/json' and 'text/event-stream'")
		return
	}
	x.peer = &x.own // one request, alone: nothing cancels it but its end
	x.post()
}

// serveSessions serves a request of the handshake-era revisions: in a
// session, or the initialize that opens one.
func (x *exchange) serveSessions() {
	r, s := x.r, x.s
	id := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodPost:
		if id == "" && !x.initializes() {
			var rid ID
			if m := x.b.single(); m != nil {
				rid = m.ID
			}
			writeRaw(x.w, http.StatusBadRequest, appendError(nil, rid, &Error{Code: CodeInvalidRequest, html: true,
				Message: "Invalid request: no Mcp-Session-Id. Open a session with initialize first, and send its Mcp-Session-Id with every request after it (or speak the sessionless revision " + Sessionless + ")."}), false)
			return
		}
		if mediaType(r.Header.Get("Content-Type")) != "application/json" {
			x.refuse(http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'")
			return
		}
		if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
			x.refuse(http.StatusBadRequest, "Accept must contain both 'application/json' and 'text/event-stream'")
			return
		}
		if id != "" {
			if x.sess = x.lookup(id); x.sess == nil {
				return
			}
			x.peer = &x.sess.peer
			x.post()
			return
		}
		x.open()
	case http.MethodGet:
		if _, streamOK := accepts(r.Header.Values("Accept")); !streamOK {
			x.refuse(http.StatusBadRequest, "Accept must contain 'text/event-stream' for GET requests")
			return
		}
		if id == "" {
			x.refuse(http.StatusBadRequest, "Bad Request: GET requires an Mcp-Session-Id header")
			return
		}
		if x.sess = x.lookup(id); x.sess != nil {
			x.get()
		}
	case http.MethodDelete:
		if id == "" {
			x.refuse(http.StatusBadRequest, "Bad Request: DELETE requires an Mcp-Session-Id header")
			return
		}
		if x.sess = x.lookup(id); x.sess != nil {
			s.sessions.end(id)
			x.w.WriteHeader(http.StatusNoContent)
		}
	default:
		x.w.Header().Set("Allow", "GET, POST, DELETE")
		x.refuse(http.StatusMethodNotAllowed, "Method Not Allowed")
	}
}

// initializes reports whether a POST carries an initialize.
func (x *exchange) initializes() bool {
	for _, m := range x.b.msgs {
		if m.Method == "initialize" {
			return true
		}
	}
	return false
}

// lookup finds the session of id: 404 when there is none, 403 when
// another owner opened it.
func (x *exchange) lookup(id string) *session {
	ss := x.s.sessions.get(id)
	if ss == nil {
		x.refuse(http.StatusNotFound, "session not found")
		return nil
	}
	if ss.owner != "" && ss.owner != x.s.owner(x.ctx) {
		x.refuse(http.StatusForbidden, "session user mismatch")
		return nil
	}
	return ss
}

// open serves the initialize that opens a session: within the caps, a
// place is reserved before the session exists; a session whose initialize
// fails ends with its request.
func (x *exchange) open() {
	s := x.s
	owner := x.s.owner(x.ctx)
	done, evicted, refused := s.sessions.reserve(owner)
	if evicted != nil {
		s.sessions.closed(evicted)
	}
	if refused != nil {
		var rid ID
		if m := x.b.single(); m != nil {
			rid = m.ID
		}
		refused.html = true
		writeRaw(x.w, http.StatusOK, appendError(nil, rid, refused), false)
		return
	}
	ss := &session{id: s.opts.NewSessionID(), owner: owner, closed: make(chan struct{}), used: s.opts.Now()}
	done(ss)
	x.sess, x.peer, x.opened = ss, &ss.peer, true
	x.post()
	ss.peer.mu.Lock()
	initialized := ss.peer.initialized
	ss.peer.mu.Unlock()
	if !initialized {
		s.sessions.end(ss.id)
	}
}

// post serves a POST's messages, once its transport's headers and its
// session passed: the checks the protocol makes of each message, then the
// notifications in order and the requests at once, answered as one JSON
// body or as events.
func (x *exchange) post() {
	r, b := x.r, x.b
	if len(r.Header["Last-Event-Id"]) > 0 {
		x.refuse(http.StatusBadRequest, "can't send Last-Event-ID for POST request")
		return
	}
	version := x.version
	if version == "" {
		version = v20250326
	}
	if b.batch && version >= v20250618 {
		// What the revision does not read as a message is JSON-RPC's
		// -32600 with "id": null, as over stdio; the session goes on.
		writeRaw(x.w, http.StatusBadRequest, appendError(nil, ID{}, &Error{Code: CodeInvalidRequest, html: true,
			Message: fmt.Sprintf("Invalid request: JSON-RPC batching is not supported in %s and later (request version: %s).", v20250618, version)}), false)
		return
	}
	calls := 0
	for i := range b.msgs {
		m := &b.msgs[i]
		if !m.request {
			continue
		}
		if err := checkRequest(m); err != nil {
			if err.Code == CodeMethodNotFound {
				if x.sessionless && m.IsCall() {
					x.writeSDKError(http.StatusNotFound, m.ID, err)
					return
				}
				if one := b.single(); one != nil && one.ID.IsValid() {
					writeRaw(x.w, http.StatusOK, appendError(nil, one.ID, &Error{Code: CodeMethodNotFound, html: true,
						Message: "Method not found: " + strings.TrimPrefix(err.Message, "JSON RPC not handled: ")}), true)
					return
				}
			}
			x.refuse(http.StatusBadRequest, err.Message)
			return
		}
		if metaVersion := m.meta.version; (m.IsCall() && version >= Sessionless) || metaVersion != "" {
			switch {
			case !x.sessionless && m.Method != "server/discover":
				x.writeSDKError(http.StatusBadRequest, m.ID, &Error{Code: CodeUnsupportedProtocolVersion,
					Message: fmt.Sprintf("protocol version %q is not supported by this server", version),
					Data:    versionData(Versions[1:], version)})
				return
			case x.version == "":
				x.writeSDKError(http.StatusBadRequest, m.ID, Errorf(CodeHeaderMismatch, "Mcp-Protocol-Version header is required for requests carrying %q", MetaProtocolVersion))
				return
			case metaVersion == "":
				x.writeSDKError(http.StatusBadRequest, m.ID, Errorf(CodeInvalidParams, "missing or invalid _meta field %q", MetaProtocolVersion))
				return
			case x.version != metaVersion:
				x.writeSDKError(http.StatusBadRequest, m.ID, Errorf(CodeHeaderMismatch, "Mcp-Protocol-Version header %q does not match request %s %q", x.version, MetaProtocolVersion, metaVersion))
				return
			}
		}
		if m.IsCall() {
			calls++
		}
	}
	if one := b.single(); one != nil && x.sessionless {
		if err := x.standardHeaders(one); err != nil {
			x.writeSDKError(http.StatusBadRequest, one.ID, err)
			return
		}
	}
	if calls == 0 {
		for i := range b.msgs {
			x.s.serve(&call{ctx: x.ctx, msg: &b.msgs[i], peer: x.peer})
		}
		x.w.WriteHeader(http.StatusAccepted)
		return
	}
	if x.sess != nil {
		for _, m := range b.msgs {
			if m.IsCall() && x.inflight(m.ID) {
				x.writeSDKError(http.StatusBadRequest, m.ID, Errorf(CodeInvalidRequest, "duplicate in-flight request ID %s", strings.Trim(m.ID.raw, `"`)))
				return
			}
		}
	}
	x.answer()
}

// standardHeaders holds a sessionless message to its Mcp-Method and
// Mcp-Name as the official SDK words their mismatches (what checkHeaders
// let through: a message whose params are of other types).
func (x *exchange) standardHeaders(m *Message) *Error {
	if !m.request {
		return nil
	}
	h := x.r.Header
	switch method := h.Get("Mcp-Method"); {
	case method == "":
		return &Error{Code: CodeHeaderMismatch, Message: "missing required Mcp-Method header"}
	case method != m.Method:
		return Errorf(CodeHeaderMismatch, "header mismatch: Mcp-Method header value '%s' does not match body value '%s'", method, m.Method)
	}
	if m.Method != "tools/call" && m.Method != "resources/read" && m.Method != "prompts/get" {
		return nil
	}
	if x.name == "" {
		return Errorf(CodeHeaderMismatch, "missing required Mcp-Name header for method %q", m.Method)
	}
	want, ok := nameOf(m)
	if !ok {
		return Errorf(CodeHeaderMismatch, "failed to extract name from parameters for method %q", m.Method)
	}
	if x.name != want {
		return Errorf(CodeHeaderMismatch, "header mismatch: Mcp-Name header value '%s' does not match body value '%s'", x.name, want)
	}
	return nil
}

func (x *exchange) inflight(id ID) bool {
	x.peer.mu.Lock()
	defer x.peer.mu.Unlock()
	_, ok := x.peer.inflight[id.raw]
	return ok
}

// writeSDKError answers a message with a JSON-RPC error, as the
// transport's checks of a message do.
func (x *exchange) writeSDKError(status int, id ID, e *Error) {
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	x.w.Write(appendError(nil, id, e))
}

// answer serves a POST that carries requests, and frames their answers.
func (x *exchange) answer() {
	s, b := x.s, x.b
	one := b.single()
	switch {
	case x.sessionless && one != nil && one.Method == "resources/read" && s.opts.DirectReads,
		!x.sessionless && one != nil && one.Method == "resources/read" && s.streamedRead(x.readURI(one)):
		x.direct(one)
	case x.sessionless && one != nil && one.Method == "tools/call" && s.opts.ProgressStreams && one.meta.progress != nil:
		x.progressCall(one)
	case x.sessionless:
		x.sessionlessJSON(one)
	case one != nil && one.Method == "tools/call" && x.directCall(one):
		if one.meta.progress != nil {
			x.progressCall(one)
		} else {
			x.directJSON(one)
		}
	default:
		x.events()
	}
}

// readURI is a read's URI, "" when its params are not a read's.
func (x *exchange) readURI(m *Message) string {
	if m.paramsErr != nil {
		return ""
	}
	return m.p.uri
}

// directCall reports whether a session's call answers as one JSON body
// (or, with a progress token, as events without ids): a call of a known
// tool whose arguments are an object, that no dropped stream may meet.
func (x *exchange) directCall(m *Message) bool {
	s := x.s
	if !s.opts.DirectCalls || (s.opts.MayDrop != nil && s.opts.MayDrop(x.r)) || odd(m) {
		return false
	}
	name, _ := named(m)
	_, known := s.tools[name]
	return known
}

// start serves a request: its context ends when the request is cancelled
// (notifications/cancelled) or its session ends (which cancels the
// requests of its peer).
func (x *exchange) start(m *Message, ctx context.Context) *call {
	c := &call{msg: m, peer: x.peer}
	if x.sess == nil {
		// A sessionless request stands alone: no notification can
		// cancel it; it ends with its HTTP request.
		c.ctx = ctx
		return c
	}
	c.start(ctx)
	return c
}

// sessionlessJSON answers a sessionless request as one JSON body; the
// revision gives some errors their own status (404 for a method not
// found, 400 for bad params or a revision not spoken).
func (x *exchange) sessionlessJSON(m *Message) {
	c := x.start(m, x.ctx)
	rep := x.s.serve(c)
	c.finish()
	defer rep.done()
	h := x.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	if rep.err == nil && m.Method == "tools/call" && x.s.opts.DirectCalls {
		writeRaw(x.w, http.StatusOK, rep.msg, false)
		return
	}
	h.Set("Content-Type", "application/json")
	if rep.err != nil {
		switch rep.err.Code {
		case CodeMethodNotFound:
			x.w.WriteHeader(http.StatusNotFound)
		case CodeInvalidParams, CodeUnsupportedProtocolVersion, CodeMissingRequiredClientCapabilities:
			x.w.WriteHeader(http.StatusBadRequest)
		}
		x.w.Write(rep.msg)
		return
	}
	x.w.Write(rep.msg)
}

// directJSON answers a session's call as one JSON body.
func (x *exchange) directJSON(m *Message) {
	c := x.start(m, x.ctx)
	rep := x.s.serve(c)
	c.finish()
	defer rep.done()
	if rep.err != nil {
		// An error of the protocol answers on a stream, as every
		// request of a session that is not a direct call.
		st := x.newStream(false)
		st.maybePrime()
		st.send(rep.msg)
		st.finish()
		return
	}
	writeRaw(x.w, http.StatusOK, rep.msg, false)
}

// progressCall answers a call that carries a progress token as events
// without ids: its progress notifications, then its result.
func (x *exchange) progressCall(m *Message) {
	c := x.start(m, x.ctx)
	defer c.finish()
	ev := &plainEvents{w: x.w}
	c.notify = ev.send
	rep := x.s.serve(c)
	defer rep.done()
	if rep.err != nil && !ev.started {
		if x.sessionless {
			x.w.Header().Set("Cache-Control", "no-cache, no-transform")
			x.w.Header().Set("Content-Type", "application/json")
			x.w.WriteHeader(map[bool]int{true: http.StatusNotFound, false: http.StatusBadRequest}[rep.err.Code == CodeMethodNotFound])
			x.w.Write(rep.msg)
			return
		}
		st := x.newStream(false)
		st.maybePrime()
		st.send(rep.msg)
		st.finish()
		return
	}
	ev.send(rep.msg)
}

// direct answers a read as one JSON body: a blob is encoded while it is
// read, so memory stays flat whatever the file's size. Its errors answer
// with HTTP 200.
func (x *exchange) direct(m *Message) {
	c := x.start(m, x.ctx)
	c.streams = true
	defer c.finish()
	rep := x.s.serve(c)
	defer rep.done()
	if rep.err != nil {
		writeRaw(x.w, http.StatusOK, rep.msg, false)
		return
	}
	h := x.w.Header()
	if x.sessionless {
		h.Set("Cache-Control", "no-cache, no-transform")
	}
	if rep.blob == nil {
		writeRaw(x.w, http.StatusOK, rep.msg, false)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.FormatInt(int64(len(rep.msg))+int64(base64.StdEncoding.EncodedLen(int(rep.size)))+int64(len(rep.tail)), 10))
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(rep.msg)
	enc := base64.NewEncoder(base64.StdEncoding, x.w)
	if _, err := io.CopyBuffer(enc, rep.blob, make([]byte, 48<<10)); err != nil {
		x.s.opts.Logger.Warn("MCP resource read cut short", "err", err)
		panic(http.ErrAbortHandler)
	}
	enc.Close()
	x.w.Write(rep.tail)
}

// plainEvents answer a call as server-sent events without ids: its
// progress, then its result. The head goes with the first event, once
// the call has put what it adds to the head (a rate window) on it.
type plainEvents struct {
	w       http.ResponseWriter
	mu      sync.Mutex
	started bool
}

func (e *plainEvents) send(msg []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		e.started = true
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
		e.w.WriteHeader(http.StatusOK)
	}
	buf := make([]byte, 0, len(msg)+24)
	buf = append(append(append(buf, "event: message\ndata: "...), msg...), "\n\n"...)
	e.w.Write(buf)
	http.NewResponseController(e.w).Flush()
}

// events answers a session's POST on an event stream whose events carry
// ids (when the server keeps events): its requests run at once; a batch's
// answers go once all are in.
func (x *exchange) events() {
	s, b := x.s, x.b
	st := x.newStream(b.batch)
	st.maybePrime()
	var wg sync.WaitGroup
	for i := range b.msgs {
		m := &b.msgs[i]
		if !m.IsCall() {
			s.serve(&call{ctx: x.ctx, msg: m, peer: x.peer})
			continue
		}
		// Resumable answers outlive the request that asked: a client
		// that lost the stream reads them from the store.
		ctx := x.ctx
		if st.id != "" {
			ctx = context.WithoutCancel(ctx)
		}
		c := x.start(m, ctx)
		c.notify = st.send
		c.drop = st.drop
		if err := s.admit(c); err != nil {
			c.finish()
			st.send(c.refused(err).msg)
			continue
		}
		run := func() {
			defer c.finish()
			rep := s.run(c)
			st.send(rep.msg)
			rep.done()
		}
		if len(b.msgs) == 1 || c.sync() {
			run()
			continue
		}
		wg.Go(run)
	}
	wg.Wait()
	st.finish()
}

// A stream is a POST's event stream in a session. Its head, and its
// priming event, wait for its first message: a call puts what it adds to
// the head (a rate window) on it before then.
type stream struct {
	x       *exchange
	id      string // "" when the server keeps no events: no ids
	version string // the revision: close and priming events came with 2025-11-25
	mu      sync.Mutex
	next    int  // the next event's index
	started bool // the head went
	hold    bool // a batch: everything waits for the last answer
	held    bytes.Buffer
	primed  bool // a priming event goes with the head
	dropped bool
	done    chan struct{}
	// resumed is a GET that resumed the stream after it was dropped:
	// its next events go to it.
	resumed http.ResponseWriter
}

func (x *exchange) newStream(hold bool) *stream {
	st := &stream{x: x, hold: hold, done: make(chan struct{})}
	st.version = x.version
	if st.version == "" {
		st.version = v20250326
	}
	for _, m := range x.b.msgs {
		if m.Method == "initialize" && m.paramsErr == nil && m.p.version != "" {
			st.version = m.p.version
		}
	}
	if x.s.events != nil && x.sess != nil {
		st.id = crand.Text()
		x.sess.mu.Lock()
		if x.sess.streams == nil {
			x.sess.streams = map[string]*stream{}
		}
		x.sess.streams[st.id] = st
		x.sess.mu.Unlock()
	}
	h := x.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	if x.opened {
		h.Set("Mcp-Session-Id", x.sess.id)
	}
	return st
}

// maybePrime gives the stream a priming event (2025-11-25 and later, when
// the server keeps events): an id the client may resume from before any
// message.
func (st *stream) maybePrime() {
	if st.id == "" || st.version < v20251125 || st.version >= Sessionless {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.x.s.events.append(st.x.sess.id, st.id, nil)
	st.next++
	st.primed = true
}

// send sends a message on the stream: kept for resumption, written unless
// the stream was dropped.
func (st *stream) send(msg []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var id string
	if st.id != "" {
		st.x.s.events.append(st.x.sess.id, st.id, bytes.Clone(msg))
		id = st.id + "_" + strconv.Itoa(st.next)
		st.next++
	}
	if st.dropped {
		if st.resumed != nil {
			writeEvent(st.resumed, "message", id, "", msg)
		}
		return
	}
	st.write(appendEvent(nil, "message", id, "", msg))
}

// write writes an event, after the head (and the priming event) when it
// is the first. Called with st.mu.
func (st *stream) write(ev []byte) {
	if st.hold {
		st.held.Write(ev)
		return
	}
	if !st.started {
		st.started = true
		st.x.w.WriteHeader(http.StatusOK)
		if st.primed {
			st.x.w.Write(appendEvent(nil, "prime", st.id+"_0", "", nil))
		}
	}
	st.x.w.Write(ev)
	http.NewResponseController(st.x.w).Flush()
}

// drop ends the stream before the rest of its answers (a fault): from
// 2025-11-25 with a close event that tells the client when to resume.
// True when the client can resume it.
func (st *stream) drop() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.id == "" {
		return false
	}
	if st.version >= v20251125 {
		st.write(appendEvent(nil, "close", "", strconv.FormatInt(streamRetry.Milliseconds(), 10), nil))
	} else if !st.started && !st.hold {
		st.started = true
		st.x.w.WriteHeader(http.StatusOK)
		if st.primed {
			st.x.w.Write(appendEvent(nil, "prime", st.id+"_0", "", nil))
		}
	}
	st.dropped = true
	return true
}

// finish ends the stream once every request of it is answered.
func (st *stream) finish() {
	st.mu.Lock()
	if st.hold {
		st.x.w.WriteHeader(http.StatusOK)
		if st.primed {
			st.x.w.Write(appendEvent(nil, "prime", st.id+"_0", "", nil))
		}
		st.x.w.Write(st.held.Bytes())
	} else if !st.started {
		st.started = true
		st.x.w.WriteHeader(http.StatusOK)
	}
	close(st.done)
	st.mu.Unlock()
	if st.id != "" {
		st.x.sess.mu.Lock()
		delete(st.x.sess.streams, st.id)
		st.x.sess.mu.Unlock()
	}
}

// appendEvent appends a server-sent event.
func appendEvent(dst []byte, name, id, retry string, data []byte) []byte {
	dst = append(append(append(dst, "event: "...), name...), '\n')
	if id != "" {
		dst = append(append(append(dst, "id: "...), id...), '\n')
	}
	if retry != "" {
		dst = append(append(append(dst, "retry: "...), retry...), '\n')
	}
	dst = append(append(dst, "data: "...), data...)
	return append(dst, "\n\n"...)
}

func writeEvent(w http.ResponseWriter, name, id, retry string, data []byte) {
	w.Write(appendEvent(nil, name, id, retry, data))
	http.NewResponseController(w).Flush()
}

// get serves a session's GET: the stream for the server's own messages,
// or, with Last-Event-ID, a POST's stream resumed after that event.
func (x *exchange) get() {
	w, r, ss := x.w, x.r, x.sess
	sseHead := func() {
		h := w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
	}
	if len(r.Header["Last-Event-Id"]) == 0 {
		ss.mu.Lock()
		taken := ss.standalone
		ss.standalone = true
		ss.mu.Unlock()
		if taken {
			x.refuse(http.StatusConflict, "stream ID conflicts with ongoing stream")
			return
		}
		defer func() {
			ss.mu.Lock()
			ss.standalone = false
			ss.mu.Unlock()
		}()
		sseHead()
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": ok\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-x.ctx.Done():
		case <-ss.closed:
		}
		return
	}
	last := r.Header.Get("Last-Event-ID")
	streamID, idxText, ok := strings.Cut(last, "_")
	idx, err := strconv.Atoi(idxText)
	if !ok || strings.Contains(idxText, "_") || err != nil || idx < 0 {
		x.refuse(http.StatusBadRequest, fmt.Sprintf("malformed Last-Event-ID %q", last))
		return
	}
	if x.s.events == nil {
		x.refuse(http.StatusBadRequest, "stream replay unsupported")
		return
	}
	ss.mu.Lock()
	live := ss.streams[streamID]
	ss.mu.Unlock()
	if live != nil {
		// No event is sent on the stream while its past is replayed.
		live.mu.Lock()
		if !live.dropped || live.resumed != nil {
			live.mu.Unlock()
			x.refuse(http.StatusConflict, "stream ID conflicts with ongoing stream")
			return
		}
	}
	replay, err := x.s.events.after(ss.id, streamID, idx)
	if err != nil {
		if live != nil {
			live.mu.Unlock()
		}
		x.refuse(http.StatusBadRequest, "failed to replay events")
		return
	}
	sseHead()
	for _, data := range replay {
		idx++
		if len(data) > 0 {
			writeEvent(w, "message", streamID+"_"+strconv.Itoa(idx), "", data)
		}
	}
	if live == nil {
		return
	}
	select {
	case <-live.done:
		live.mu.Unlock()
		return
	default:
	}
	live.resumed = w
	live.mu.Unlock()
	select {
	case <-live.done:
	case <-x.ctx.Done():
	case <-ss.closed:
	}
	live.mu.Lock()
	if live.resumed == w {
		live.resumed = nil
	}
	live.mu.Unlock()
}
