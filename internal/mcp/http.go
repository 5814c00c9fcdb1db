package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// transports are the Streamable HTTP handlers of the front, sharing its
// server:
//
//   - stateful serves the handshake-era protocol revisions (up to
//     2025-11-25): sessions with Mcp-Session-Id, each bound to the workspace
//     that opened it; calls answer as server-sent events, so that progress
//     notifications reach the client on the call's own stream, before its
//     result.
//   - stateless serves the sessionless revision (2026-07-28 and later,
//     Mcp-Protocol-Version on every request): a call answers as one JSON
//     body, or as server-sent events (statelessSSE) when it carries a
//     progress token.
type transports struct {
	stateful, stateless, statelessSSE http.Handler
}

// sessionlessVersion is the first protocol revision without sessions.
const sessionlessVersion = "2026-07-28"

func (f *Front) newTransports() transports {
	getServer := func(*http.Request) *sdk.Server { return f.server }
	// The server's one host guard (edge.Env.Guard) has judged the Host
	// and the Origin before the SDK sees a request: the SDK's own
	// DNS-rebinding check, which knows neither --allowed-hosts nor the
	// public URL, steps aside.
	opts := func(stateless, jsonResponse bool) *sdk.StreamableHTTPOptions {
		return &sdk.StreamableHTTPOptions{Stateless: stateless, JSONResponse: jsonResponse, Logger: quiet(f.env.Log),
			MaxRequestBodyBytes: -1, // the edge caps bodies
			// Events are kept so that a stream dropped mid-call (a fault,
			// or a network) resumes with Last-Event-ID.
			EventStore:                 f.events,
			DisableLocalhostProtection: true, PropagateRequestCancellation: true, SessionTimeout: 0} // sessions idle out in sweep
	}
	// The bearer middleware hands the SDK the exchange Serve made, as the
	// request's token info: its handlers find the caller in req.Extra, and
	// a session answers only to the workspace that opened it (UserID).
	// Serve has authenticated the request already: the token is not
	// looked up again.
	bind := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		x := exchangeFrom(ctx)
		if x == nil {
			return nil, fmt.Errorf("%w: the request did not pass the MCP front", auth.ErrInvalidToken)
		}
		return x.token, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return transports{
		stateful:     bind(sdk.NewStreamableHTTPHandler(getServer, opts(false, false))),
		stateless:    bind(sdk.NewStreamableHTTPHandler(getServer, opts(true, true))),
		statelessSSE: bind(sdk.NewStreamableHTTPHandler(getServer, opts(true, false))),
	}
}

// sessionFault applies the fault an MCP request meets as it arrives, at
// the session stage: its kind may answer the request here (true), or end
// its session (the SDK then answers 404, as for any session it does not
// know).
func (f *Front) sessionFault(w *edge.Writer, r *http.Request) bool {
	session := r.Header.Get("Mcp-Session-Id")
	h := w.SessionFault(session != "")
	if h == nil {
		return false
	}
	a := &arrival{f: f, w: w, session: session}
	h.Session(a)
	return a.refused
}

// arrival is an MCP request as it arrives, for a fault of the session
// stage.
type arrival struct {
	f       *Front
	w       *edge.Writer
	session string
	refused bool
}

func (a *arrival) Header() http.Header { return a.w.Header() }

func (a *arrival) Refuse(err error) {
	edge.WriteError(a.w, err)
	a.refused = true
}

func (a *arrival) EndSession() {
	for ss := range a.f.server.Sessions() {
		if ss.ID() == a.session {
			_ = ss.Close()
		}
	}
}

// streamRetry is the SSE retry a dropped stream closes with: clients
// reconnect after it, not after their own back-off.
const streamRetry = 10 * time.Millisecond

// dropStream ends a tool call's event stream before its result, for a
// fault of the call stage: with sessions, the client resumes the stream with
// Last-Event-ID and reads the result the server kept; without (the
// sessionless revision), the connection closes and the client reports the
// call failed.
func dropStream(req *sdk.CallToolRequest, w *edge.Writer) {
	if req.Extra != nil && req.Extra.CloseSSEStream != nil && req.Extra.Header.Get("Mcp-Protocol-Version") < sessionlessVersion {
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: streamRetry})
		return
	}
	w.Abort()
}

// Serve serves an MCP request that passed the edge: the Host and Origin
// checks, authentication (once: the tool calls and resource reads it
// carries count as the principal found here), the rate-limit headers, the
// one decoding of a POST's body, then the front's answer to a tool call or
// an asset read, or the SDK's transport for the rest of the protocol. A
// tool call counts through the gate, and puts the window after the call on
// the response.
func (f *Front) Serve(w *edge.Writer, r *http.Request) {
	if r.URL.Path != Path {
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	if err := f.env.Guard(r, "the MCP server"); err != nil {
		edge.WriteError(w, err)
		return
	}
	principal, err := f.env.Identify(w, r.Header.Get("Authorization"), gate.ResourceMCP)
	if err != nil {
		// An MCP client finds the authorization server from here (RFC
		// 9728, the MCP authorization specification).
		w.Header().Set("WWW-Authenticate", gate.Challenge(r.Header.Get("Authorization"), err)+
			`, resource_metadata="`+gate.ResourceMetadataURL(f.env.View(r).Base, gate.ResourceMCP)+`"`)
		edge.WriteError(w, err)
		return
	}
	// Faults come after the request is authorized for what it touches:
	// another workspace's session is refused as without them.
	if f.othersSession(r.Header.Get("Mcp-Session-Id"), principal.WorkspaceID) {
		w.NoFaults()
	}
	if w.Faultable() && f.sessionFault(w, r) {
		return
	}
	// What the edge is told of the request: who made it, the method of
	// its message, and the tool call it carried (the exchange hands it).
	out := edge.Outcome{Principal: &principal}
	var msgs body
	var raw []byte // a POST's body, for the SDK: a call the front answers lets it go
	if r.Method == http.MethodPost {
		// One buffer of the declared size: growing one would leave copies
		// of a large message behind.
		var buf bytes.Buffer
		buf.Grow(int(min(max(r.ContentLength, 0), f.env.MaxBodyBytes) + bytes.MinRead))
		if _, err := buf.ReadFrom(r.Body); err != nil {
			edge.WriteError(w, wire.BodyError(err))
			return
		}
		data := buf.Bytes()
		// What is not JSON-RPC gets JSON-RPC's error, with HTTP 400 as
		// the transport says, rather than the SDK's plain text.
		var rpcErr *jsonrpc.Error
		msgs, rpcErr = f.decode(data)
		out.MCPMethod = msgs.methods()
		w.Hand(out)
		if rpcErr != nil {
			edge.WriteRaw(w, http.StatusBadRequest, errorMessage(nil, rpcErr))
			return
		}
		raw = data
	}
	var id json.RawMessage
	if m := msgs.single(); m != nil {
		id = m.ID
	}
	stateless, ok := checkRevision(w, r, id, &msgs)
	if !ok {
		return
	}
	session := r.Header.Get("Mcp-Session-Id")
	if session != "" {
		f.touch(session) // every request of a session keeps it alive
	}
	x := newExchange(w, f.env.View(r), out)
	defer x.finish()
	if m := msgs.read(); m != nil && acceptsJSON(r) && (stateless && sessionless(r, m) ||
		!stateless && strings.HasPrefix(m.Params.URI, assetURIPrefix) && f.owns(session, principal.WorkspaceID)) {
		raw = nil
		f.serveRead(w, x, m.ID, m.Params.URI, stateless)
		return
	}
	// Outside the sessionless revision a request needs its session (the
	// SDK would open one and refuse the request with a code of 0).
	if r.Method == http.MethodPost && !stateless && session == "" &&
		!slices.ContainsFunc(msgs.msgs, func(m message) bool { return m.Method == "initialize" }) {
		edge.WriteRaw(w, http.StatusBadRequest, errorMessage(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Invalid request: no Mcp-Session-Id. Open a session with initialize first, and send its Mcp-Session-Id with every request after it (or speak the sessionless revision " + sessionlessVersion + ")."}))
		return
	}
	if m := msgs.call(); m != nil && f.answers(r, m, stateless, principal.WorkspaceID) {
		raw = nil // the decoded message is all the call needs: a large body is not held twice
		f.serveCall(w, r, x, m, stateless)
		return
	}
	var opened func()
	if m := msgs.single(); m != nil && m.Method == "initialize" && !stateless {
		done, err := f.admitSession(principal.WorkspaceID)
		if err != nil {
			writeRPCError(w, m.ID, rpcError(err))
			return
		}
		// The session's owner is booked before its head goes out: the
		// client may use the session as soon as it reads the id.
		opened = sync.OnceFunc(func() { done(w.Header().Get("Mcp-Session-Id")) })
		defer opened()
	}
	h := f.http.stateful
	if stateless {
		h = f.http.stateless
		if m := msgs.single(); m != nil && m.Method == "tools/call" && m.progress() != nil {
			h = f.http.statelessSSE
		}
	}
	tw := &transportWriter{Writer: w, post: r.Method == http.MethodPost, id: id, hold: msgs.batch, handshake: !stateless, opened: opened}
	if raw != nil {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	}
	h.ServeHTTP(tw, r.WithContext(withExchange(r.Context(), x)))
	tw.finish()
}

// callerOf is who sent a message the SDK serves over HTTP: the exchange
// Serve handed it as the request's token info.
func callerOf(extra *sdk.RequestExtra) caller {
	if extra != nil && extra.TokenInfo != nil {
		if x, ok := extra.TokenInfo.Extra[exchangeInfo].(*exchange); ok {
			return x.caller()
		}
	}
	return caller{}
}

// exchange is an HTTP request while the SDK serves it: the tool calls it
// carries put the rate window after the call on its response and their
// operation into its journal entry. The calls run on the SDK's goroutines;
// once the request is done (finish), they leave it alone.
type exchange struct {
	w    *edge.Writer
	view wire.View
	id   string // the request id, read once: the calls of a batch run at once
	// principal is who the request authenticated as; token says it to
	// the SDK, and carries the exchange to its handlers (withExchange).
	principal sim.Principal
	token     *auth.TokenInfo
	// out is what the edge was told of the request; finish adds the call.
	out edge.Outcome

	mu     sync.Mutex
	done   bool
	call   *edge.Call
	read   int64 // bytes of the resources read through the SDK
	window *sim.RateDecision
}

func newExchange(w *edge.Writer, view wire.View, out edge.Outcome) *exchange {
	return &exchange{w: w, view: view, id: w.Header().Get("X-Request-Id"), principal: *out.Principal, out: out}
}

// exchangeInfo is the key of the exchange in the token info's Extra.
const exchangeInfo = "mediamock.exchange"

type exchangeKey struct{}

// withExchange carries an exchange in a request's context, to the bearer
// middleware that hands it to the SDK as the request's token info.
func withExchange(ctx context.Context, x *exchange) context.Context {
	x.token = &auth.TokenInfo{UserID: "workspace:" + strconv.FormatUint(x.principal.WorkspaceID, 10), Scopes: x.principal.Scopes,
		Extra: map[string]any{exchangeInfo: x}}
	return context.WithValue(ctx, exchangeKey{}, x)
}

func exchangeFrom(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

// caller is who sent the exchange's messages.
func (x *exchange) caller() caller {
	return caller{x: x, view: x.view}
}

// spend takes size bytes of the exchange's budget of resource reads: the
// first read of a request is always let through, then the reads of a batch
// share exchangeResourceBytes. Over stdio (no exchange) reads are not
// bounded: the client is the local process that started the server.
func (x *exchange) spend(size int64) error {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.read > 0 && x.read+size > exchangeResourceBytes {
		return rpcError(&sim.Error{Kind: sim.ETOOLARGE, Code: "response_too_large",
			Message: fmt.Sprintf("This request has read %d bytes of resources already; the reads of one batch may return at most %d bytes. Read the asset in a request of its own.", x.read, exchangeResourceBytes),
			Details: map[string]any{"limit_bytes": exchangeResourceBytes, "read_bytes": x.read, "asset_bytes": size}})
	}
	x.read += size
	return nil
}

// rate puts a tool call's rate window on the response, before the SDK
// writes its headers (with the call's first event, or its result).
//
// The calls of a batch run at once: the response carries the window
// after the last of them, the latest window with the fewest remaining.
func (x *exchange) rate(d sim.RateDecision) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return
	}
	if w := x.window; w != nil && (d.Reset.Before(w.Reset) || (d.Reset.Equal(w.Reset) && d.Remaining >= w.Remaining)) {
		return
	}
	x.window = &d
	wire.SetRateHeaders(x.w.Header(), d)
}

// note records a tool call for the request's journal entry.
func (x *exchange) note(c edge.Call) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.done {
		x.call = &c
	}
}

// finish ends the exchange and hands what its calls noted to the edge.
func (x *exchange) finish() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.done = true
	if x.call != nil {
		out := x.out
		out.Call = x.call
		x.w.Hand(out)
	}
}

// transportWriter turns the SDK's plain-text HTTP errors (a bad Accept
// header, an unknown session, a session of another workspace) into the
// spec's error object, as every other error of the server.
//
// It also holds back the head of a POST's event stream, and the priming
// event the SDK opens it with (it keeps events for resumption), until the
// stream's first message: a tool call puts its rate window on the head
// before then.
type transportWriter struct {
	*edge.Writer
	status int
	text   bytes.Buffer
	post   bool
	id     json.RawMessage // the id of a POST's single request
	// handshake is true for the revisions before the sessionless one,
	// which define no cache fields in results.
	handshake bool
	// hold keeps the whole answer of a batch until every call of it has
	// put its window on the head.
	hold bool
	// complete says a sessionless result is complete (completeResult): the
	// SDK leaves a resources/read result without a resultType.
	complete bool
	held     bytes.Buffer
	// head and priming are held back until the stream's first message.
	head    int
	priming []byte
	started bool // the head went to the edge
	// opened, when set, is called before the head goes to the edge.
	opened func()
}

// sendHead writes the head to the edge.
func (t *transportWriter) sendHead(status int) {
	if t.opened != nil {
		t.opened()
	}
	t.Writer.WriteHeader(status)
}

func (t *transportWriter) WriteHeader(status int) {
	if t.status != 0 || t.head != 0 {
		return
	}
	if status >= 400 && strings.HasPrefix(t.Header().Get("Content-Type"), "text/plain") {
		t.status = status
		return
	}
	if t.hold || (t.post && status == http.StatusOK && strings.HasPrefix(t.Header().Get("Content-Type"), "text/event-stream")) {
		t.head = status
		return
	}
	t.started = true
	t.sendHead(status)
}

func (t *transportWriter) Write(b []byte) (int, error) {
	if t.status != 0 {
		return t.text.Write(b)
	}
	n := len(b)
	if t.handshake {
		b = stripCacheable(b)
	}
	if t.complete {
		b = completeResult(b)
	}
	if _, err := t.write(b); err != nil {
		return 0, err
	}
	return n, nil
}

func (t *transportWriter) write(b []byte) (int, error) {
	if t.hold {
		t.head = cmp.Or(t.head, http.StatusOK)
		return t.held.Write(b)
	}
	if t.post && !t.started && t.priming == nil && bytes.HasPrefix(b, []byte("event: prime\n")) {
		t.head = cmp.Or(t.head, http.StatusOK)
		t.priming = bytes.Clone(b)
		return len(b), nil
	}
	t.release()
	return t.Writer.Write(b)
}

// release sends what was held back.
func (t *transportWriter) release() {
	t.started = true
	if t.opened != nil {
		t.opened() // before any byte: a write sends the head
	}
	if t.head != 0 {
		t.sendHead(t.head)
		t.head = 0
	}
	if t.priming != nil {
		t.Writer.Write(t.priming)
		t.priming = nil
	}
}

// FlushError flushes, unless the stream's head is held back.
func (t *transportWriter) FlushError() error {
	if t.hold || t.head != 0 || t.priming != nil {
		return nil
	}
	return t.Writer.FlushError()
}

// Unwrap lets the SDK flush server-sent events.
func (t *transportWriter) Unwrap() http.ResponseWriter { return t.Writer }

func (t *transportWriter) finish() {
	if t.status == 0 {
		t.release()
		if t.held.Len() > 0 {
			t.Writer.Write(t.held.Bytes())
		}
		return
	}
	// A request of a method the server does not have (the handshake-era
	// revisions; the SDK answers the sessionless one itself) is a
	// JSON-RPC error, so that a client's session goes on.
	if t.status == http.StatusBadRequest && validID(t.id) && strings.HasPrefix(t.text.String(), "JSON RPC not handled") {
		edge.WriteRaw(t.Writer, http.StatusOK, errorMessage(t.id, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: "Method not found: " + strings.TrimSpace(strings.TrimPrefix(t.text.String(), "JSON RPC not handled: "))}))
		return
	}
	// A message the SDK could not read is JSON-RPC's invalid request.
	if t.status == http.StatusBadRequest && t.post && strings.HasPrefix(t.text.String(), "malformed payload: ") {
		edge.WriteRaw(t.Writer, http.StatusBadRequest, errorMessage(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Invalid request: " + strings.TrimSpace(strings.TrimPrefix(t.text.String(), "malformed payload: ")) + "."}))
		return
	}
	t.Header().Del("X-Content-Type-Options")
	kind, code := sim.EINVALID, "invalid_mcp_request"
	switch t.status {
	case http.StatusUnauthorized:
		kind, code = sim.EUNAUTHORIZED, "invalid_credentials"
	case http.StatusForbidden:
		kind, code = sim.EFORBIDDEN, "forbidden"
	case http.StatusNotFound:
		kind, code = sim.ENOTFOUND, "not_found"
	case http.StatusMethodNotAllowed:
		kind, code = sim.ENOTALLOWED, "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		kind, code = sim.ETOOLARGE, "payload_too_large"
	case http.StatusUnsupportedMediaType:
		kind, code = sim.EUNSUPPORTED, "unsupported_media_type"
	default:
		if t.status >= 500 {
			kind, code = sim.EINTERNAL, "internal_error"
		}
	}
	msg := strings.TrimSpace(t.text.String())
	if msg != "" && !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	edge.WriteError(t.Writer, &sim.Error{Kind: kind, Code: code, Message: "MCP transport: " + msg})
}
