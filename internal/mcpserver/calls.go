package mcpserver

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// A message's way through the server: the peer that sent it, the call it
// makes (cancellable, answered once), its admission (the handshake, the
// params), then its method.

// peer is what the server knows of the other end of a session (an HTTP
// session, a stdio connection, or one sessionless request): its
// handshake and its requests under way.
type peer struct {
	mu          sync.Mutex
	initialized bool   // by initialize, or a sessionless request
	version     string // the revision initialize negotiated
	logLevel    string // logging/setLevel
	inflight    map[string]context.CancelFunc
}

// cancel cancels the request under way with id.
func (p *peer) cancel(id ID) {
	p.mu.Lock()
	cancel := p.inflight[id.raw]
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// cancelAll cancels every request under way (the session ended).
func (p *peer) cancelAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cancel := range p.inflight {
		cancel()
	}
}

// A call is one message being served.
type call struct {
	ctx         context.Context
	msg         *Message
	peer        *peer
	sessionless bool // the request follows the sessionless revision (its _meta)
	// notify sends a notification on the call's stream.
	notify func(msg []byte)
	// drop ends the call's stream before its result (DropStream).
	drop func() bool
	// streams lets a read's blob stream after the answer's head (a read
	// answered alone, as one JSON body); elsewhere it is read whole.
	streams bool
	// cancel, when set, cancels ctx, and the request is registered with
	// its peer (start) until finish.
	cancel context.CancelFunc
	// tool and reply hold a tool call and its answer: one allocation
	// with the call's.
	tool  ToolCall
	reply reply
}

// start registers a request with its peer, for notifications/cancelled:
// its context ends when it is cancelled, or when the peer's session ends.
func (c *call) start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	p := c.peer
	p.mu.Lock()
	if p.inflight == nil {
		p.inflight = map[string]context.CancelFunc{}
	}
	p.inflight[c.msg.ID.raw] = cancel
	p.mu.Unlock()
	c.ctx, c.cancel = ctx, cancel
}

// finish ends a request's registration.
func (c *call) finish() {
	if c.cancel == nil {
		return
	}
	p := c.peer
	p.mu.Lock()
	delete(p.inflight, c.msg.ID.raw)
	p.mu.Unlock()
	c.cancel()
}

// A reply is a request's answer: msg, or, for a read whose blob streams,
// msg, the blob's base64, then tail.
type reply struct {
	msg  []byte
	blob io.Reader
	size int64
	tail []byte
	err  *Error // the error the answer carries, nil for a result
	// buf, when set, holds msg and goes back to the answers' pool once
	// msg is written.
	buf *[]byte
}

func (r *reply) done() {
	if r != nil && r.buf != nil {
		*r.buf = r.msg
		putAnswerBuffer(r.buf)
		r.msg, r.buf = nil, nil
	}
}

// serve serves a message: the answer to a request, nil for a notification.
func (s *Server) serve(c *call) *reply {
	if err := s.admit(c); err != nil {
		return c.refused(err)
	}
	return s.run(c)
}

// refused is the answer of a request refused before its method ran.
func (c *call) refused(err *Error) *reply {
	m := c.msg
	if !m.IsCall() {
		return nil
	}
	if err.Code == CodeMethodNotFound {
		err = methodNotFound(m.Method)
	}
	return &reply{msg: appendError(nil, m.ID, err), err: err}
}

// run runs an admitted message's method: the answer to a request, nil for
// a notification.
func (s *Server) run(c *call) *reply {
	res, err := s.handle(c)
	if !c.msg.IsCall() {
		res.done()
		return nil
	}
	if err != nil {
		return c.refused(err)
	}
	return res
}

// sync reports whether an admitted message runs before the messages after
// it are read: a notification, and initialize (whose handshake the next
// requests depend on). Other requests run at once.
func (c *call) sync() bool { return !c.msg.IsCall() || c.msg.Method == "initialize" }

// admit takes a message in as the official SDK's sessions do, in the
// order the messages came: its revision (a sessionless request's _meta),
// what the revision allows, the handshake, the method's params.
func (s *Server) admit(c *call) *Error {
	m := c.msg
	if m.IsCall() {
		if c.msg.meta.version >= Sessionless {
			if ci := c.msg.meta.clientInfo; ci != 0 && ci != 'n' && ci != '{' {
				return Errorf(CodeInvalidParams, "invalid _meta field %q", MetaClientInfo)
			}
			if !c.msg.meta.capabilities {
				return Errorf(CodeInvalidParams, "missing or invalid _meta field %q", MetaClientCapabilities)
			}
			c.sessionless = true
			if !Speaks(c.msg.meta.version) {
				return &Error{Code: CodeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: versionData(Versions, c.msg.meta.version)}
			}
		}
	}
	switch m.Method {
	case "initialize", "ping", "notifications/initialized", "notifications/roots/list_changed", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		if c.sessionless {
			return methodNotFound(m.Method)
		}
	case "server/discover":
		if !c.sessionless {
			return methodNotFound(m.Method)
		}
	default:
		c.peer.mu.Lock()
		initialized := c.peer.initialized
		if !initialized && c.sessionless {
			c.peer.initialized = true
		}
		c.peer.mu.Unlock()
		if !initialized && !c.sessionless && m.IsCall() {
			return &Error{Message: fmt.Sprintf("method %q is invalid during session initialization", m.Method)}
		}
	}
	if err := checkRequest(m); err != nil {
		return err
	}
	return m.paramsErr
}
