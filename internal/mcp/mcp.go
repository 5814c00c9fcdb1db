// Package mcp is the MCP front: the service's second front door, an MCP
// server with one tool per operation of openapi.json, served over
// Streamable HTTP at /mcp on the REST API's listener, or over stdio.
//
// The framing (JSON-RPC, the protocol revisions, sessions, event streams,
// stdio) is internal/mcpserver's, the one implementation of every method;
// this package keeps what is the service's: the tools, read from the
// document, calling their operations (package ops), the resources, the
// faults of MCP sessions and calls, and the journal.
//
// A tool call is a call of its operation: it passes the same gate as a
// REST request (authentication, one count against the workspace's rate
// window, the operation's scope, forced faults), its arguments are
// validated against openapi.json as the same HTTP request would be, and it
// runs the same handler with the same wire shapes. Protocol messages
// (initialize, tools/list, resources/list, ping, notifications)
// authenticate but do not count.
//
// The package also serves the control MCP server (Control, at
// ControlPath and over stdio): the control API's operations as tools,
// generated from control.json, each call a request to the control API's
// own handler with the caller's credential.
package mcp

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/version"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Path is where the MCP server is served, on the REST API's listener.
const Path = "/mcp"

// Implementation names the server to MCP clients.
var Implementation = &mcpserver.Implementation{Name: "mediamock", Title: "Media generation service (mock)", Version: version.String()}

// SetVersion sets the version both MCP servers tell their clients
// (serverInfo.version). The binary calls it at start with its own, so that
// an MCP client and `mockserver version` agree; call it before any server
// is made. Without it the version is the mediamock module's in the build
// (a library user's go.mod), else "dev".
func SetVersion(v string) {
	version.Set(v) // a HAR export's creator says the same
	Implementation.Version, ControlImplementation.Version = v, v
}

// Sessions of the handshake-era revisions hold memory on the server until
// they end, and opening one does not count against the rate limit: they
// are bounded in number, per workspace and in all, and end after
// sessionIdle without a request. Past its own cap a workspace's
// initialize is refused with a JSON-RPC error that says what to do. The
// server's cap refuses no workspace under its own cap: the least recently
// used session of the workspace holding the most sessions ends instead, so
// that no set of workspaces can lock another out.
const (
	maxSessions          = 4096
	maxWorkspaceSessions = 256
	sessionIdle          = 10 * time.Minute
)

// eventStoreBytes caps what the sessions' streams keep for resumption: the
// oldest events go first.
const eventStoreBytes = 4 << 20

// Front serves the MCP server of one server.
type Front struct {
	env    *edge.Env
	ops    *ops.Env // the operations' pipeline
	tools  []*tool
	server *mcpserver.Server
	// offEdge are the faults of a call no HTTP request carries (over
	// stdio): the rules of its scope, for MCP.
	offEdge  *ops.RuleFaults
	sessions atomic.Uint64
	decodes  atomic.Uint64 // the POST bodies read (Decodes)
}

// New returns the MCP front of a server, which calls the operations
// through pipeline.
func New(env *edge.Env, pipeline *ops.Env) (*Front, error) {
	f := &Front{env: env, ops: pipeline, offEdge: &ops.RuleFaults{Rules: pipeline.Rules, Class: fault.MCP}}
	var err error
	if f.tools, err = buildTools(env.API); err != nil {
		return nil, err
	}
	capServer, capWorkspace := maxSessions, maxWorkspaceSessions
	if env.MaxMCPSessions > 0 {
		capServer = env.MaxMCPSessions
	}
	if env.MaxMCPWorkspaceSessions > 0 {
		capWorkspace = env.MaxMCPWorkspaceSessions
	}
	f.server = mcpserver.New(mcpserver.Options{
		Implementation: Implementation,
		Instructions:   instructions,
		Capabilities:   mcpserver.Capabilities{Tools: true, Resources: true},
		// Session ids derive from the seed, so that the same seed and the
		// same requests give the same bytes; a session is bound to the
		// workspace that opened it.
		NewSessionID: func() string {
			return fmt.Sprintf("mcs_%016x", sim.DeriveSeed(env.Eng.Seed(), "mcp_session", f.sessions.Add(1)))
		},
		Limits: mcpserver.Limits{Sessions: capServer, PerOwner: min(capWorkspace, capServer), Idle: sessionIdle, Refuse: refuseSession},
		Now:    env.WallClock,
		Owner: func(ctx context.Context) string {
			if c := callerFrom(ctx); c.principal != nil {
				return owner(c.principal.WorkspaceID)
			}
			return ""
		},
		// Events are kept so that a stream dropped mid-call (a fault, or
		// a network) resumes with Last-Event-ID.
		EventBytes:      eventStoreBytes,
		DirectCalls:     true,
		MayDrop:         f.mayDrop,
		ProgressStreams: true,
		DirectReads:     true,
		Received: func(ctx context.Context, methods string) {
			f.decodes.Add(1)
			if out := callerFrom(ctx).out; out != nil {
				out.received(methods)
			}
		},
		HTTPError: transportError,
		Logger:    env.Log,
	})
	for _, t := range f.tools {
		if err := f.server.AddTool(t.def, f.toolHandler(t)); err != nil {
			return nil, err
		}
	}
	f.addResources()
	// A session's hanging requests end when the server begins to shut
	// down, as REST's long polls do.
	context.AfterFunc(env.Stop, f.server.EndSessions)
	go f.sweep()
	return f, nil
}

const instructions = "The media generation service: generate images, videos, voice, music and 3D models, " +
	"make Encore effect videos, read the media library, brand kits, projects and characters, and publish to social accounts. " +
	"Generation is asynchronous: create_generation answers with queued assets; pass wait_seconds (up to 55) to wait for them, " +
	"or read them again with get_generation. Completed assets can be read as resources (mediamock://assets/{id}). " +
	"Every tool call counts against the workspace's rate limit, shared with the REST API."

// refuseSession words an initialize refused past a cap: the workspace's
// own, or the server's when no workspace holds more sessions than the
// asker.
func refuseSession(scope string, limit int) *mcpserver.Error {
	who := "This workspace"
	if scope == "owner" {
		scope = "workspace"
	} else {
		who = "The server"
	}
	return rpcError(&sim.Error{Kind: sim.ECONFLICT, Code: "too_many_sessions",
		Message: fmt.Sprintf("%s has %d open MCP sessions, the most it may have. End the sessions you no longer use (DELETE /mcp with their Mcp-Session-Id); a session also ends after %s without a request.",
			who, limit, sessionIdle),
		Details: map[string]any{"limit": limit, "scope": scope, "idle_timeout_seconds": int(sessionIdle / time.Second)}})
}

// owner is the owner of the sessions a workspace opens.
func owner(ws uint64) string { return "workspace:" + strconv.FormatUint(ws, 10) }

// caller is who a message comes from, read-only, in the request's
// context: the principal the HTTP request authenticated as (over stdio,
// where there is none, each call authenticates with authorization, an
// Authorization header value), the links it can reach, and out, where the
// request's calls put what they add to its answer.
type caller struct {
	principal     *sim.Principal
	authorization string
	view          wire.View
	requestID     string
	out           *outcome // nil over stdio
}

type callerKey struct{}

// withCaller carries c in ctx; the handlers read it (callerFrom) and
// change nothing of it.
func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) caller {
	if c, ok := ctx.Value(callerKey{}).(*caller); ok {
		return *c
	}
	return caller{}
}

// Decodes is how many POST bodies the front has read: one for each.
func (f *Front) Decodes() uint64 { return f.decodes.Load() }

// OpenSessions counts the sessions open.
func (f *Front) OpenSessions() int { return f.server.Sessions() }

// ServeStdio serves one MCP session over in and out (newline-delimited
// JSON-RPC) until in ends and every request read is answered, or ctx ends.
// A line that is no message is answered with an error; the session goes
// on. Every tool call is made with apiKey; links are built from base, the
// server's public address.
func (f *Front) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, apiKey, base string) error {
	c := &caller{authorization: "Bearer " + apiKey, view: wire.View{Base: base, Eng: f.env.Eng}}
	return f.server.ServeStdio(withCaller(ctx, c), in, out)
}

// sweep ends the sessions idle for sessionIdle, once a minute, until the
// server stops.
func (f *Front) sweep() {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-f.env.Stop.Done():
			return
		case <-tick.C:
			f.server.EndIdle()
		}
	}
}
