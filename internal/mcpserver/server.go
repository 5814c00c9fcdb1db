package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Options configure a Server.
type Options struct {
	// Implementation names the server; it is read at every answer, so a
	// version set after the server is made shows.
	Implementation *Implementation
	Instructions   string
	Capabilities   Capabilities

	// NewSessionID names a session of the handshake-era revisions: ids
	// must not repeat; they may derive from a seed, so that the same seed
	// and the same requests give the same bytes.
	NewSessionID func() string
	Limits       Limits
	// Now reads the wall clock, for the sessions' idle time.
	Now func() time.Time
	// Owner names who sends a request (from the context the front serves
	// it with): a session answers only the owner that opened it, and the
	// caps count per owner. Without it, sessions have no owner.
	Owner func(ctx context.Context) string

	// EventBytes caps what the sessions' event streams keep for a client
	// that resumes one (Last-Event-ID): the oldest events go first. With
	// 0, no event carries an id and no stream resumes.
	EventBytes int

	// DirectCalls answers a session's call of a known tool as one JSON
	// body, or, when it carries a progress token, as an event stream
	// without ids; without it (and for a call MayDrop says may meet a
	// dropped stream), a call answers on an event stream whose events
	// carry ids, which a client resumes.
	DirectCalls bool
	MayDrop     func(*http.Request) bool
	// ProgressStreams answers a sessionless call that carries a progress
	// token as an event stream (its progress, then its result); without
	// it, as one JSON body.
	ProgressStreams bool
	// DirectReads answers every sessionless read as one JSON body, its
	// errors with HTTP 200.
	DirectReads bool

	// Received tells the front the methods a POST carries ("response" for
	// a message without one, comma-separated for a batch), once read.
	Received func(ctx context.Context, methods string)
	// HTTPError writes an error of the transport that is not JSON-RPC's:
	// a *TransportError, or the error of reading a request's body.
	HTTPError func(w http.ResponseWriter, err error)

	Logger *slog.Logger
}

// Limits bound the sessions of the handshake-era revisions: in all
// (Sessions), per owner (PerOwner, 0 for Sessions), and in time (Idle,
// 0 for never). Refuse words an initialize refused: scope is "owner" when
// its owner holds PerOwner sessions, "server" when the server is full
// and no owner holds more than it.
type Limits struct {
	Sessions, PerOwner int
	Idle               time.Duration
	Refuse             func(scope string, limit int) *Error
}

// A TransportError is an HTTP error of the transport: a request the
// Streamable HTTP transport refuses before any JSON-RPC message is read
// from it (a header, a session, a method).
type TransportError struct {
	Status  int
	Message string
}

func (e *TransportError) Error() string { return e.Message }

// A Server is an MCP server: the tools, resources and prompts a front
// registers, served over Streamable HTTP (ServeHTTP) and stdio
// (ServeStdio) by one implementation of every method.
type Server struct {
	opts      Options
	tools     map[string]*tool
	toolList  []*tool // by name
	resources []*resource
	templates []*template
	prompts   []*prompt

	lists sync.Map // the lists' answers, made once: listKey -> []byte

	sessions *sessionStore
	events   *eventStore
}

type tool struct {
	def     Tool
	json    []byte
	handler ToolHandler
}

type resource struct {
	def     Resource
	handler ResourceHandler
}

type template struct {
	def      ResourceTemplate
	prefix   string
	handler  ResourceHandler
	streamed bool
}

type prompt struct {
	def     Prompt
	handler PromptHandler
}

// A ToolHandler answers a call of its tool. A failure of the call is a
// result (IsError), not an error: the tool was called.
type ToolHandler func(ctx context.Context, call *ToolCall) *ToolResult

// A ToolCall is a call of a tool.
type ToolCall struct {
	Name string
	// Arguments are the arguments as sent, nil when absent: a JSON object
	// (or anything else, which the handler refuses as it sees fit). They
	// share the message's bytes: the call must not keep them after it
	// returns.
	Arguments jsontext.Value
	// Progress sends a progress notification, nil when the call carries
	// no progress token.
	Progress func(progress, total float64, message string)

	drop func() bool
}

// DropStream ends the event stream the call answers on before its result
// (a fault): true when the client can resume it and read the result (a
// session's stream whose events carry ids), false when it cannot (the
// caller then breaks the connection).
func (c *ToolCall) DropStream() bool {
	return c.drop != nil && c.drop()
}

// A ResourceHandler reads a resource (of a template: any of its URIs). A
// *Error is answered as it is; another error as an internal error.
type ResourceHandler func(ctx context.Context, uri string) (*ReadResult, error)

// A PromptHandler expands a prompt with its arguments.
type PromptHandler func(ctx context.Context, arguments map[string]string) (*PromptResult, error)

// New returns a server without tools, resources or prompts.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Implementation == nil {
		opts.Implementation = &Implementation{Name: "mcpserver", Version: "dev"}
	}
	s := &Server{opts: opts, tools: map[string]*tool{}}
	s.sessions = newSessionStore(opts.Limits, opts.Now)
	if opts.EventBytes > 0 {
		s.events = newEventStore(opts.EventBytes)
		s.sessions.onClose = s.events.forget // a session's events go with it
	}
	return s
}

// AddTool adds a tool.
func (s *Server) AddTool(t Tool, h ToolHandler) error {
	data, err := t.append(nil)
	if err != nil {
		return fmt.Errorf("mcp tool %s: %w", t.Name, err)
	}
	s.tools[t.Name] = &tool{def: t, json: data, handler: h}
	s.toolList = slices.SortedFunc(func(yield func(*tool) bool) {
		for _, t := range s.tools {
			if !yield(t) {
				return
			}
		}
	}, func(a, b *tool) int { return strings.Compare(a.def.Name, b.def.Name) })
	return nil
}

// AddResource adds a resource.
func (s *Server) AddResource(r Resource, h ResourceHandler) {
	s.resources = append(s.resources, &resource{def: r, handler: h})
	slices.SortFunc(s.resources, func(a, b *resource) int { return strings.Compare(a.def.URI, b.def.URI) })
}

// Streamed marks a resource template whose reads answer as one JSON body
// in every revision: its blob is encoded while it is read, so that memory
// stays flat whatever the file's size.
const Streamed = true

// AddResourceTemplate adds a family of resources: t.URITemplate is a
// prefix and one variable ("mediamock://assets/{id}"); h reads any URI of
// the prefix.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h ResourceHandler, streamed bool) {
	prefix, _, _ := strings.Cut(t.URITemplate, "{")
	s.templates = append(s.templates, &template{def: t, prefix: prefix, handler: h, streamed: streamed})
	slices.SortFunc(s.templates, func(a, b *template) int { return strings.Compare(a.def.URITemplate, b.def.URITemplate) })
}

// AddPrompt adds a prompt.
func (s *Server) AddPrompt(p Prompt, h PromptHandler) {
	s.prompts = append(s.prompts, &prompt{def: p, handler: h})
	slices.SortFunc(s.prompts, func(a, b *prompt) int { return strings.Compare(a.def.Name, b.def.Name) })
}

// lookupResource finds the handler of a URI: a resource's, else the first
// template whose prefix it has.
func (s *Server) lookupResource(uri string) (h ResourceHandler, mime string, streamed, ok bool) {
	for _, r := range s.resources {
		if r.def.URI == uri {
			return r.handler, r.def.MIMEType, false, true
		}
	}
	for _, t := range s.templates {
		if strings.HasPrefix(uri, t.prefix) {
			return t.handler, t.def.MIMEType, t.streamed, true
		}
	}
	return nil, "", false, false
}

// streamedRead reports whether a read of uri answers as one JSON body.
func (s *Server) streamedRead(uri string) bool {
	_, _, streamed, ok := s.lookupResource(uri)
	return ok && streamed
}

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

// handle runs an admitted message's method.
func (s *Server) handle(c *call) (*reply, *Error) {
	m := c.msg
	impl := *s.opts.Implementation
	result := func(b []byte) *reply {
		return &reply{msg: append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), m.ID.String()...), `,"result":`...), b...), '}')}
	}
	switch m.Method {
	case "initialize":
		c.peer.mu.Lock()
		again := c.peer.initialized
		c.peer.initialized = true
		c.peer.mu.Unlock()
		if again {
			return nil, &Error{Message: `duplicate "initialize" received`}
		}
		version := c.msg.p.version
		if !Speaks(version) || version >= Sessionless {
			version = v20251125
		}
		c.peer.mu.Lock()
		c.peer.version = version
		c.peer.mu.Unlock()
		b := appendField([]byte("{"), "capabilities")
		b = s.opts.Capabilities.append(b)
		b = appendStringField(b, "instructions", s.opts.Instructions, false, true)
		b = appendStringField(b, "protocolVersion", version, false, false)
		b = append(impl.append(appendField(b, "serverInfo"), false), '}')
		return result(b), nil
	case "ping", "logging/setLevel":
		if m.Method == "logging/setLevel" {
			c.peer.mu.Lock()
			c.peer.logLevel = c.msg.p.level
			c.peer.mu.Unlock()
		}
		return result([]byte("{}")), nil
	case "notifications/cancelled":
		if id, err := readID(c.msg.p.requestID); err == nil && id.IsValid() {
			c.peer.cancel(id)
		}
		return nil, nil
	case "notifications/initialized", "notifications/roots/list_changed", "notifications/progress":
		return nil, nil
	case "server/discover":
		b := s.listHead(c.sessionless, impl)
		b = appendStrings(appendField(b, "supportedVersions"), Versions)
		b = s.opts.Capabilities.append(appendField(b, "capabilities"))
		b = appendStringField(b, "instructions", s.opts.Instructions, false, true)
		return result(append(b, '}')), nil
	case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
		if c.msg.p.cursor != "" {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params"}
		}
		return result(s.list(m.Method, c.sessionless, impl)), nil
	case "tools/call":
		t := s.tools[c.msg.p.name]
		if t == nil {
			return nil, Errorf(CodeInvalidParams, "unknown tool %q", c.msg.p.name)
		}
		tc := &c.tool
		*tc = ToolCall{Name: t.def.Name, Arguments: c.msg.p.arguments, drop: c.drop}
		if token := c.msg.meta.progress; token != nil && c.notify != nil {
			tc.Progress = func(progress, total float64, message string) {
				c.notify(progressMessage(token, progress, total, message))
			}
		}
		res := t.handler(c.ctx, tc)
		buf := answerBuffer(len(res.StructuredContent) + 512)
		b := append(append(append(*buf, `{"jsonrpc":"2.0","id":`...), m.ID.String()...), `,"result":`...)
		b = append(res.append(b, c.sessionless, impl), '}')
		if res.Release != nil {
			res.Release() // the answer holds a copy of its structured content
		}
		c.reply = reply{msg: b, buf: buf}
		return &c.reply, nil
	case "resources/read":
		return s.read(c, impl)
	case "prompts/get":
		i := slices.IndexFunc(s.prompts, func(p *prompt) bool { return p.def.Name == c.msg.p.name })
		if i < 0 {
			return nil, Errorf(CodeInvalidParams, "unknown prompt %q", c.msg.p.name)
		}
		res, err := s.prompts[i].handler(c.ctx, c.msg.p.promptArgs)
		if err != nil {
			return nil, asError(err)
		}
		return result(res.append(nil, c.sessionless, impl)), nil
	case "completion/complete":
		if !c.msg.p.ref {
			return nil, Errorf(CodeInvalidParams, "invalid params: missing required 'ref' field")
		}
	}
	return nil, methodNotFound(m.Method)
}

// read serves resources/read.
func (s *Server) read(c *call, impl Implementation) (*reply, *Error) {
	uri := c.msg.p.uri
	h, mime, _, ok := s.lookupResource(uri)
	if !ok {
		return nil, ResourceNotFound(uri)
	}
	res, err := h(c.ctx, uri)
	if err != nil {
		return nil, asError(err)
	}
	if res == nil || res.Contents == nil {
		return nil, &Error{Message: fmt.Sprintf("reading resource %s: read handler returned nil information", uri)}
	}
	for i := range res.Contents {
		rc := &res.Contents[i]
		rc.URI = cmp.Or(rc.URI, uri)
		rc.MIMEType = cmp.Or(rc.MIMEType, mime)
		if rc.BlobReader != nil && !c.streams {
			// Where the answer cannot stream (a batch, an event), the
			// blob is read whole.
			data := make([]byte, rc.BlobSize)
			if _, err := io.ReadFull(rc.BlobReader, data); err != nil {
				return nil, &Error{Message: err.Error()}
			}
			rc.Blob, rc.BlobReader = data, nil
		}
	}
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), c.msg.ID.String()...), `,"result":`...)
	head, tail := res.append(head, c.sessionless, impl)
	r := &reply{msg: head}
	for _, rc := range res.Contents {
		if rc.BlobReader != nil {
			r.blob, r.size = rc.BlobReader, rc.BlobSize
			r.tail = append(tail, '}')
			return r, nil
		}
	}
	r.msg = append(head, '}')
	return r, nil
}

// asError is the JSON-RPC error of a handler's error.
func asError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Message: err.Error()}
}

// progressMessage is a progress notification.
func progressMessage(token jsontext.Value, progress, total float64, message string) []byte {
	b := make([]byte, 0, 128+len(message))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, token...)
	if message != "" {
		b = appendString(append(b, `,"message":`...), message, false)
	}
	b = appendFloat(append(b, `,"progress":`...), progress)
	if total != 0 {
		b = appendFloat(append(b, `,"total":`...), total)
	}
	return append(b, "}}"...)
}

// versionData is the data of -32022: the versions the server speaks and
// the one asked for.
func versionData(supported []string, requested string) []byte {
	b := appendStrings([]byte(`{"supported":`), supported)
	b = appendString(append(b, `,"requested":`...), requested, false)
	return append(b, '}')
}

// listHead opens a list's result: in the sessionless revision, its
// resultType, the server's name and the cache hints (the lists are the
// same for every caller).
func (s *Server) listHead(sessionless bool, impl Implementation) []byte {
	b := []byte("{")
	if sessionless {
		b = appendStringField(b, "resultType", "complete", false, false)
		b = appendServerMeta(b, impl, false)
		b = append(appendField(b, "ttlMs"), '0')
		b = appendStringField(b, "cacheScope", "public", false, false)
	}
	return b
}

type listKey struct {
	method      string
	sessionless bool
	impl        Implementation
}

// list is a list's result, made once for each revision.
func (s *Server) list(method string, sessionless bool, impl Implementation) []byte {
	key := listKey{method, sessionless, impl}
	if b, ok := s.lists.Load(key); ok {
		return b.([]byte)
	}
	b := s.listHead(sessionless, impl)
	switch method {
	case "tools/list":
		b = append(appendField(b, "tools"), '[')
		for i, t := range s.toolList {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, t.json...)
		}
	case "resources/list":
		b = append(appendField(b, "resources"), '[')
		for i, r := range s.resources {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.def.append(b)
		}
	case "resources/templates/list":
		b = append(appendField(b, "resourceTemplates"), '[')
		for i, t := range s.templates {
			if i > 0 {
				b = append(b, ',')
			}
			b = t.def.append(b)
		}
	case "prompts/list":
		b = append(appendField(b, "prompts"), '[')
		for i, p := range s.prompts {
			if i > 0 {
				b = append(b, ',')
			}
			b = p.def.append(b)
		}
	}
	b = append(b, "]}"...)
	s.lists.Store(key, b)
	return b
}

// answerBuffers are the buffers tool results are built in: an answer is
// about the size of the operation's body, and is copied when written.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

func answerBuffer(size int) *[]byte {
	b := answerBuffers.Get().(*[]byte)
	if cap(*b) < size {
		*b = make([]byte, 0, max(size, 1024))
	}
	*b = (*b)[:0]
	return b
}

func putAnswerBuffer(b *[]byte) {
	if cap(*b) <= 1<<20 {
		answerBuffers.Put(b)
	}
}
