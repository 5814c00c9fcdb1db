package mcpserver

import (
	"context"
	"fmt"
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
