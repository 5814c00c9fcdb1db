// Package mcp is the MCP front: the service's second front door, an MCP
// server with one tool per operation of openapi.json, served over
// Streamable HTTP at /mcp on the REST API's listener, or over stdio.
//
// A tool call is a call of its operation: it passes the same gate as a REST
// request (authentication, one count against the workspace's rate window,
// the operation's scope, forced faults), its arguments are validated
// against openapi.json as the same HTTP request would be, and it runs the
// same handler (package ops) with the same wire shapes. Protocol messages
// (initialize, tools/list, resources/list, resources/read, ping,
// notifications) authenticate but do not count.
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
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Path is where the MCP server is served, on the REST API's listener.
const Path = "/mcp"

// Implementation names the server to MCP clients.
var Implementation = &sdk.Implementation{Name: "mediamock", Title: "Media generation service (mock)", Version: moduleVersion()}

// SetVersion sets the version both MCP servers tell their clients
// (serverInfo.version). The binary calls it at start with its own, so that
// an MCP client and `mockserver version` agree; call it before any server
// is made. Without it the version is the mediamock module's in the build
// (a library user's go.mod), else "dev".
func SetVersion(v string) {
	Implementation.Version, ControlImplementation.Version = v, v
}

// moduleVersion is the mediamock module's version in the build: the main
// module's when mediamock is the main module, else its dependency's.
func moduleVersion() string {
	const path = "github.com/mediamock/mediamock"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Path == path && info.Main.Version != "" && info.Main.Version != "(devel)" {
			return info.Main.Version
		}
		for _, d := range info.Deps {
			if d.Path == path && d.Version != "" && d.Version != "(devel)" {
				return d.Version
			}
		}
	}
	return "dev"
}

// Front serves the MCP server of one server.
type Front struct {
	env   *edge.Env
	ops   *ops.Env // the operations' pipeline
	tools []*tool
	// server answers MCP over HTTP; each tool call authenticates with the
	// Authorization header of the HTTP request that carried it.
	server *sdk.Server
	http   transports
	// events keep what sessions' streams sent, for resumption.
	events *sdk.MemoryEventStore

	// offEdge are the faults of a call no HTTP request carries (over
	// stdio): the rules of its scope, for MCP.
	offEdge *ops.RuleFaults

	sessions atomic.Uint64
	book     sessionBook
	decodes  atomic.Uint64 // the POST bodies decoded (Decodes)
}

// eventStoreBytes caps what the sessions' streams keep for resumption: the
// oldest events go first.
const eventStoreBytes = 4 << 20

// New returns the MCP front of a server, which calls the operations
// through pipeline.
func New(env *edge.Env, pipeline *ops.Env) (*Front, error) {
	f := &Front{env: env, ops: pipeline, offEdge: &ops.RuleFaults{Rules: pipeline.Rules, Class: fault.MCP}}
	var err error
	if f.tools, err = buildTools(env.API); err != nil {
		return nil, err
	}
	f.server = f.newServer(callerOf)
	f.events = sdk.NewMemoryEventStore(nil)
	f.events.SetMaxBytes(eventStoreBytes)
	f.http = f.newTransports()
	// A session's hanging requests end when the server begins to shut
	// down, as REST's long polls do.
	context.AfterFunc(env.Stop, f.closeSessions)
	go f.sweep()
	return f, nil
}

// caller is who a message comes from, and how to reach it.
type caller struct {
	// x is the HTTP request that carried the message, authenticated as it
	// arrived; nil over stdio, where each call authenticates with
	// authorization (an Authorization header value).
	x             *exchange
	authorization string
	view          wire.View // the links the caller can reach
}

// Decodes is how many POST bodies the front has decoded: one for each.
func (f *Front) Decodes() uint64 { return f.decodes.Load() }

// newServer makes an MCP server with the front's tools and resources; who
// tells who sent a message.
func (f *Front) newServer(who func(*sdk.RequestExtra) caller) *sdk.Server {
	s := sdk.NewServer(Implementation, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       quiet(f.env.Log),
		// Session ids derive from the seed, so that the same seed and the
		// same requests give the same bytes; a session is bound to the
		// workspace that opened it.
		GetSessionID: func() string {
			return fmt.Sprintf("mcs_%016x", sim.DeriveSeed(f.env.Eng.Seed(), "mcp_session", f.sessions.Add(1)))
		},
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Resources: &sdk.ResourceCapabilities{}},
		// An asset belongs to the caller's workspace: no shared cache.
		SetCacheable: func(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
			if r, ok := req.(*sdk.ReadResourceRequest); ok && strings.HasPrefix(r.Params.URI, assetURIPrefix) {
				c.CacheScope = "private"
			}
		},
	})
	for _, t := range f.tools {
		s.AddTool(t.def, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			tc := toolCall{tool: t, raw: req.Params.Arguments}
			tc.args, tc.bad = decodeArguments(req.Params.Arguments)
			if token := req.Params.GetProgressToken(); token != nil {
				tc.progress = progress(func(p, total float64, status string) {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: total, Message: status})
				})
			}
			c := who(req.Extra)
			if c.x != nil {
				tc.drop = func() { dropStream(req, c.x.w) }
			}
			return f.call(ctx, tc, c), nil
		})
	}
	f.addResources(s, who)
	return s
}

const instructions = "The media generation service: generate images, videos, voice, music and 3D models, " +
	"make Encore effect videos, read the media library, brand kits, projects and characters, and publish to social accounts. " +
	"Generation is asynchronous: create_generation answers with queued assets; pass wait_seconds (up to 55) to wait for them, " +
	"or read them again with get_generation. Completed assets can be read as resources (mediamock://assets/{id}). " +
	"Every tool call counts against the workspace's rate limit, shared with the REST API."

// ServeStdio serves one MCP session over in and out (newline-delimited
// JSON-RPC) until in ends and every request read is answered, or ctx ends.
// A line that is no message is answered with an error; the session goes on
// (Stdio). Every tool call is made with apiKey;
// links are built from base, the server's public address.
func (f *Front) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, apiKey, base string) error {
	c := caller{authorization: "Bearer " + apiKey, view: wire.View{Base: base, Eng: f.env.Eng}}
	s := f.newServer(func(*sdk.RequestExtra) caller { return c })
	lines := NewStdio(ctx, in, out)
	err := s.Run(ctx, &sdk.IOTransport{Reader: lines.Reader, Writer: lines.Writer, MaxLineLength: -1})
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

// closeSessions ends every HTTP session: their hanging requests answer.
func (f *Front) closeSessions() {
	for ss := range f.server.Sessions() {
		if err := ss.Close(); err != nil {
			f.env.Log.Debug("close MCP session", "err", err)
		}
	}
}

// quiet passes on the SDK's warnings and errors, not its lines about every
// session's start and end.
func quiet(log *slog.Logger) *slog.Logger { return slog.New(atLeast{log.Handler(), slog.LevelWarn}) }

type atLeast struct {
	slog.Handler
	level slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(attrs), h.level}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.level}
}
