package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The Streamable HTTP transport. The handshake-era revisions (up to
// 2025-11-25) speak in sessions (Mcp-Session-Id), the sessionless one
// (2026-07-28) in requests that stand alone, each naming its revision and
// method in headers. A POST carries a message or (before 2025-06-18) a
// batch, and is answered as one JSON body or as server-sent events; a
// session's GET opens its stream for the server, or resumes a POST's
// (Last-Event-ID); DELETE ends a session.

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
