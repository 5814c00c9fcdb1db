package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Serve serves an MCP request that passed the edge: the Host and Origin
// checks, authentication (once: the tool calls and resource reads it
// carries count as the principal found here), the faults of the MCP
// session, then the MCP server. A tool call counts through the gate, and
// puts the window after the call on the response.
func (f *Front) Serve(w *edge.Writer, r *http.Request) {
	if r.URL.Path != Path {
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	if err := f.env.Guard(r, "the MCP server"); err != nil {
		edge.WriteError(w, err)
		return
	}
	p, err := f.env.Identify(w, r.Header.Get("Authorization"), gate.ResourceMCP)
	if err != nil {
		// An MCP client finds the authorization server from here (RFC
		// 9728, the MCP authorization specification).
		w.Header().Set("WWW-Authenticate", gate.Challenge(r.Header.Get("Authorization"), err)+
			`, resource_metadata="`+gate.ResourceMetadataURL(f.env.View(r).Base, gate.ResourceMCP)+`"`)
		wire.SetRateHeaders(w.Header(), f.env.Gate.Anonymous().Rate) // the anonymous window's, as every 401
		edge.WriteError(w, err)
		return
	}
	// Faults come after the request is authorized for what it touches:
	// another workspace's session is refused as without them.
	if o, ok := f.server.SessionOwner(r.Header.Get("Mcp-Session-Id")); ok && o != owner(p.WorkspaceID) {
		w.NoFaults()
	}
	if w.Faultable() && f.sessionFault(w, r) {
		return
	}
	x := &exchange{principal: p, out: outcome{w: w}}
	x.out.told.Principal = &x.principal
	x.caller = caller{principal: &x.principal, view: f.env.View(r), requestID: w.Header().Get("X-Request-Id"), out: &x.out}
	defer x.out.finish()
	f.server.Serve(withCaller(r.Context(), &x.caller), w, r)
}

// exchange is what an HTTP request to the front holds while the MCP
// server serves it: its caller, and its outcome.
type exchange struct {
	principal sim.Principal
	caller    caller
	out       outcome
}

// sessionFault applies the fault an MCP request meets as it arrives, at
// the session stage: its kind may answer the request here (true), or end
// its session (the server then answers 404, as for any session it does not
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
	a.f.server.EndSession(a.session)
}

// mayDrop reports whether a request's calls may meet a dropped stream (a
// fault of the call stage, from its Mock-Fault header or a rule): a
// session's call then answers on a stream that the client resumes with
// Last-Event-ID.
func (f *Front) mayDrop(r *http.Request) bool {
	return r.Header.Get(fault.Header) != "" || f.env.Rules.HasStage(fault.Call)
}

// outcome is what the calls of an HTTP request add to its answer: the
// rate window after them (on the head, which goes once they have counted),
// the call its journal entry names, the bytes of resources they read.
// The calls of a batch run at once.
type outcome struct {
	w *edge.Writer
	// told is what the edge was told of the request (edge.Outcome): who
	// made it and the method of its message; finish adds the call.
	told   edge.Outcome
	mu     sync.Mutex
	done   bool
	call   *edge.Call
	read   int64
	window *sim.RateDecision
}

// received tells the edge the JSON-RPC method of the request's message (a
// batch's, joined by commas), before its head goes.
func (o *outcome) received(methods string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.told.MCPMethod = methods
	o.w.Hand(o.told)
}

// spend takes size bytes of the request's budget of resource reads: the
// first read of a request is always let through, then the reads of a batch
// share exchangeResourceBytes. Over stdio (no outcome) reads are not
// bounded: the client is the local process that started the server.
func (o *outcome) spend(size int64) error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.read > 0 && o.read+size > exchangeResourceBytes {
		return rpcError(&sim.Error{Kind: sim.ETOOLARGE, Code: "response_too_large",
			Message: fmt.Sprintf("This request has read %d bytes of resources already; the reads of one batch may return at most %d bytes. Read the asset in a request of its own.", o.read, exchangeResourceBytes),
			Details: map[string]any{"limit_bytes": exchangeResourceBytes, "read_bytes": o.read, "asset_bytes": size}})
	}
	o.read += size
	return nil
}

// rate puts a call's rate window on the response, before its head goes.
// The calls of a batch run at once: the response carries the window after
// the last of them, the latest window with the fewest remaining.
func (o *outcome) rate(d sim.RateDecision) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	if w := o.window; w != nil && (d.Reset.Before(w.Reset) || (d.Reset.Equal(w.Reset) && d.Remaining >= w.Remaining)) {
		return
	}
	o.window = &d
	wire.SetRateHeaders(o.w.Header(), d)
}

// note records a tool call for the request's journal entry.
func (o *outcome) note(c edge.Call) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done {
		o.call = &c
	}
}

// finish hands what the calls noted to the edge, once the request is
// answered.
func (o *outcome) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = true
	if o.call != nil {
		told := o.told
		told.Call = o.call
		o.w.Hand(told)
	}
}

// transportError answers an error of the MCP transport (a header, a
// session, a method), or a body that could not be read, with the spec's
// error object, as every other error of the server.
func transportError(hw http.ResponseWriter, err error) {
	w := hw.(*edge.Writer)
	var te *mcpserver.TransportError
	if !errors.As(err, &te) {
		edge.WriteError(w, wire.BodyError(err))
		return
	}
	kind, code := sim.EINVALID, "invalid_mcp_request"
	switch te.Status {
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
		if te.Status >= 500 {
			kind, code = sim.EINTERNAL, "internal_error"
		}
	}
	msg := strings.TrimSpace(te.Message)
	if msg != "" && !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	edge.WriteError(w, &sim.Error{Kind: kind, Code: code, Message: "MCP transport: " + msg})
}
