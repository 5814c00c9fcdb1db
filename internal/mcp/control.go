package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/routes"
	"github.com/mediamock/mediamock/internal/version"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The control MCP server is the simulation's own MCP server, for an agent
// that steers the mock from its session: served at ControlPath (beside the
// control API, never mixed into the service's /mcp) and over stdio. Its
// tools are the operations of control.json, one each, generated from the
// document; a call is a call of the control plane's operation
// (internal/controlplane), with the caller's credential, so that every
// rule, refusal and scope of the control API applies unchanged (a
// sandbox's control token reaches that sandbox alone). Nothing it does
// counts against a workspace's rate limit, and its calls stay out of the
// journal, as the control API's requests do.

// ControlPath is where the control MCP server is served, under the
// control API's prefix.
const ControlPath = "/_mock/mcp"

// ControlImplementation names the control MCP server to MCP clients.
var ControlImplementation = &mcpserver.Implementation{Name: "mediamock-control", Title: "Media generation service mock: the simulation's controls", Version: version.String()}

// maxControlSessions caps the open sessions of the handshake-era
// revisions; each ends after sessionIdle without a request.
const maxControlSessions = 256

// ControlConfig is what a control MCP server is made with.
type ControlConfig struct {
	// Document is control.json, parsed: one tool per operation.
	Document *contract.Contract
	// Prefix is the control API's path prefix (/_mock): operation paths
	// are relative to it.
	Prefix string
	// Plane serves the operations.
	Plane *controlplane.Plane
}

// Control serves the control MCP server of one server.
type Control struct {
	env      *edge.Env
	tools    []*tool
	plane    *controlplane.Plane
	table    *routes.Table // the control API's paths, for the path a call makes
	server   *mcpserver.Server
	sessions atomic.Uint64
}

// NewControl returns the control MCP server of a server.
func NewControl(env *edge.Env, c ControlConfig) (*Control, error) {
	tools, err := controlTools(c.Document, c.Prefix)
	if err != nil {
		return nil, err
	}
	var rs []routes.Route
	for _, op := range c.Document.Operations() {
		rs = append(rs, routes.Route{Method: op.Method, Path: op.Path, ID: op.ID})
	}
	ctl := &Control{env: env, tools: tools, plane: c.Plane, table: routes.TableOf(c.Prefix, rs)}
	ctl.server = mcpserver.New(mcpserver.Options{
		Implementation: ControlImplementation,
		Instructions:   controlInstructions,
		Capabilities:   mcpserver.Capabilities{Tools: true, Resources: true, Prompts: true, Logging: true},
		NewSessionID: func() string {
			return fmt.Sprintf("mcc_%016x", sim.DeriveSeed(env.Eng.Seed(), "control_mcp_session", ctl.sessions.Add(1)))
		},
		Limits: mcpserver.Limits{Sessions: maxControlSessions, Idle: sessionIdle, Refuse: func(string, int) *mcpserver.Error {
			return rpcError(&sim.Error{Kind: sim.ECONFLICT, Code: "too_many_sessions",
				Message: fmt.Sprintf("The control MCP server has %d open sessions, the most it may have. End the sessions you no longer use (DELETE %s with their Mcp-Session-Id), or speak the sessionless revision %s.", maxControlSessions, ControlPath, mcpserver.Sessionless),
				Details: map[string]any{"limit": maxControlSessions}})
		}},
		Now:       env.WallClock,
		HTTPError: transportError,
		Logger:    env.Log,
	})
	for _, t := range tools {
		if err := ctl.server.AddTool(t.def, func(ctx context.Context, call *mcpserver.ToolCall) *mcpserver.ToolResult {
			return ctl.call(ctx, t, call, controlCallerFrom(ctx))
		}); err != nil {
			return nil, err
		}
	}
	ctl.addResources()
	addPrompts(ctl.server)
	context.AfterFunc(env.Stop, ctl.server.EndSessions)
	go func() {
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		for {
			select {
			case <-env.Stop.Done():
				return
			case <-tick.C:
				ctl.server.EndIdle()
			}
		}
	}()
	return ctl, nil
}

// controlCaller is who sends a message to the control MCP server,
// read-only, in the request's context.
type controlCaller struct {
	authorization string // the Authorization header its calls are made with; "" for none
	host          string // the Host its calls are made to
}

type controlCallerKey struct{}

func controlCallerFrom(ctx context.Context) controlCaller {
	c, _ := ctx.Value(controlCallerKey{}).(controlCaller)
	return c
}

const controlInstructions = "The controls of a simulation of the media generation service (a mock): its clock, faults, " +
	"sandboxes, workspaces, credits and ledgers, jobs, the journal of the requests it answered and their coverage. " +
	"Each tool is one operation of the control API (/_mock), with its rules: a sandbox's control token reaches that sandbox alone. " +
	"Create a sandbox (create_sandbox) and use its api_key on the service's own MCP server (mcp_url) or REST API (base_url); " +
	"inject a fault, then finish the sandbox's jobs now (run_sandbox) or move the clock (advance_clock), and read what happened " +
	"(get_journal, wait_journal, get_ledger, get_coverage). The journal and the coverage of the caller's scope are resources too; " +
	"the prompts stage common rehearsals. Nothing here counts against a workspace's rate limit."

// Serve serves a request to the control MCP server that passed the edge:
// the control API's guard (the Host, the Origin, the credential), then the
// MCP server, whose calls are made with the request's credential to its
// Host.
func (c *Control) Serve(w *edge.Writer, r *http.Request) {
	if r.URL.Path != ControlPath {
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	if err := c.authorize(r); err != nil {
		if ch := controlplane.Challenge(r.Header.Get("Authorization"), err); ch != "" {
			w.Header().Set("WWW-Authenticate", ch)
		}
		edge.WriteError(w, err)
		return
	}
	who := controlCaller{authorization: r.Header.Get("Authorization"), host: r.Host}
	c.server.Serve(context.WithValue(r.Context(), controlCallerKey{}, who), w, r)
}

// authorize refuses a request to the control MCP server that the control
// API would refuse whatever its operation: a foreign Host or Origin, or a
// credential that is neither the server's control token nor a live
// sandbox's (with neither configured, none is needed). Each tool call is
// then judged as a control call of its own.
func (c *Control) authorize(r *http.Request) error {
	if err := c.env.Guard(r, "the control MCP server"); err != nil {
		return err
	}
	_, err := c.plane.Credential("", r.Header.Get("Authorization"), nil)
	return err
}

// ServeStdio serves one session of the control MCP server over in and out
// (newline-delimited JSON-RPC) until in ends and every request read is
// answered, or ctx ends. Every call is made with authorization (an
// Authorization header value, "" for none) to host, the server's address.
func (c *Control) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, authorization, host string) error {
	who := controlCaller{authorization: authorization, host: host}
	return c.server.ServeStdio(context.WithValue(ctx, controlCallerKey{}, who), in, out)
}
