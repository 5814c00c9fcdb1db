package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/routes"
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
var ControlImplementation = &sdk.Implementation{Name: "mediamock-control", Title: "Media generation service mock: the simulation's controls", Version: moduleVersion()}

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
	env    *edge.Env
	tools  []*tool
	plane  *controlplane.Plane
	table  *routes.Table // the control API's paths, for the path a call makes
	server *sdk.Server
	// stateful serves the handshake-era revisions, stateless the
	// sessionless one (2026-07-28), as the service's /mcp does.
	stateful, stateless http.Handler
	sessions            atomic.Uint64
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
	// Over HTTP a message comes from whoever the request carrying it
	// says: its Authorization, and its Host for the links the control
	// API builds (Serve restores the Host into the header the SDK hands
	// the handlers).
	ctl.server = ctl.newServer(func(extra *sdk.RequestExtra) controlCaller {
		if extra == nil || extra.Header == nil {
			return controlCaller{}
		}
		return controlCaller{authorization: extra.Header.Get("Authorization"), host: extra.Header.Get("Host")}
	})
	getServer := func(*http.Request) *sdk.Server { return ctl.server }
	opts := func(stateless bool) *sdk.StreamableHTTPOptions {
		// The server's host guard has judged the Host and the Origin
		// before the SDK sees a request (Serve).
		return &sdk.StreamableHTTPOptions{Stateless: stateless, JSONResponse: stateless, Logger: quiet(env.Log),
			MaxRequestBodyBytes: -1, DisableLocalhostProtection: true, PropagateRequestCancellation: true, SessionTimeout: sessionIdle}
	}
	ctl.stateful = sdk.NewStreamableHTTPHandler(getServer, opts(false))
	ctl.stateless = sdk.NewStreamableHTTPHandler(getServer, opts(true))
	context.AfterFunc(env.Stop, func() {
		for ss := range ctl.server.Sessions() {
			_ = ss.Close()
		}
	})
	return ctl, nil
}

// controlCaller is who sends a message to the control MCP server.
type controlCaller struct {
	authorization string // the Authorization header its calls are made with; "" for none
	host          string // the Host its calls are made to
}

// newServer makes an MCP server with the control tools, resources and
// prompts; who tells who sent a message.
func (c *Control) newServer(who func(*sdk.RequestExtra) controlCaller) *sdk.Server {
	s := sdk.NewServer(ControlImplementation, &sdk.ServerOptions{
		Instructions: controlInstructions,
		Logger:       quiet(c.env.Log),
		GetSessionID: func() string {
			return fmt.Sprintf("mcc_%016x", sim.DeriveSeed(c.env.Eng.Seed(), "control_mcp_session", c.sessions.Add(1)))
		},
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Resources: &sdk.ResourceCapabilities{},
			Prompts: &sdk.PromptCapabilities{}, Logging: &sdk.LoggingCapabilities{}},
	})
	for _, t := range c.tools {
		s.AddTool(t.def, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return c.call(ctx, t, req.Params.Arguments, who(req.Extra)), nil
		})
	}
	c.addResources(s, who)
	addPrompts(s)
	return s
}

const controlInstructions = "The controls of a simulation of the media generation service (a mock): its clock, faults, " +
	"sandboxes, workspaces, credits and ledgers, jobs, the journal of the requests it answered and their coverage. " +
	"Each tool is one operation of the control API (/_mock), with its rules: a sandbox's control token reaches that sandbox alone. " +
	"Create a sandbox (create_sandbox) and use its api_key on the service's own MCP server (mcp_url) or REST API (base_url); " +
	"inject a fault, then finish the sandbox's jobs now (run_sandbox) or move the clock (advance_clock), and read what happened " +
	"(get_journal, wait_journal, get_ledger, get_coverage). The journal and the coverage of the caller's scope are resources too; " +
	"the prompts stage common rehearsals. Nothing here counts against a workspace's rate limit."

// Serve serves a request to the control MCP server that passed the edge:
// the control API's guard (the Host, the Origin, the credential), the
// one decoding of a POST's body, the protocol revision's headers, then the
// SDK's transport.
func (c *Control) Serve(w *edge.Writer, r *http.Request) {
	if r.URL.Path != ControlPath {
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	if err := c.authorize(r); err != nil {
		edge.WriteError(w, err)
		return
	}
	var msgs body
	var raw []byte
	if r.Method == http.MethodPost {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			edge.WriteError(w, wire.BodyError(err))
			return
		}
		var rpcErr *jsonrpc.Error
		if msgs, rpcErr = decodeBody(data); rpcErr != nil {
			edge.WriteRaw(w, http.StatusBadRequest, errorMessage(nil, rpcErr))
			return
		}
		raw = data
	}
	var id json.RawMessage
	m := msgs.single()
	if m != nil {
		id = m.ID
	}
	stateless, ok := checkRevision(w, r, id, &msgs)
	if !ok {
		return
	}
	initialize := slices.ContainsFunc(msgs.msgs, func(m message) bool { return m.Method == "initialize" })
	if r.Method == http.MethodPost && !stateless && r.Header.Get("Mcp-Session-Id") == "" && !initialize {
		edge.WriteRaw(w, http.StatusBadRequest, errorMessage(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Invalid request: no Mcp-Session-Id. Open a session with initialize first, and send its Mcp-Session-Id with every request after it (or speak the sessionless revision " + sessionlessVersion + ")."}))
		return
	}
	if initialize && !stateless {
		n := 0
		for range c.server.Sessions() {
			n++
		}
		if n >= maxControlSessions {
			writeRPCError(w, id, rpcError(&sim.Error{Kind: sim.ECONFLICT, Code: "too_many_sessions",
				Message: fmt.Sprintf("The control MCP server has %d open sessions, the most it may have. End the sessions you no longer use (DELETE %s with their Mcp-Session-Id), or speak the sessionless revision %s.", n, ControlPath, sessionlessVersion),
				Details: map[string]any{"limit": maxControlSessions}}))
			return
		}
	}
	h := c.stateful
	if stateless {
		h = c.stateless
	}
	// The handlers make their calls to the Host this request was made to.
	r.Header["Host"] = []string{r.Host}
	tw := &transportWriter{Writer: w, post: r.Method == http.MethodPost, id: id, hold: msgs.batch, handshake: !stateless,
		complete: stateless && m != nil && m.Method == "resources/read"}
	if raw != nil {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	}
	h.ServeHTTP(tw, r)
	tw.finish()
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
	caller := controlCaller{authorization: authorization, host: host}
	s := c.newServer(func(*sdk.RequestExtra) controlCaller { return caller })
	lines := NewStdio(ctx, in, out)
	err := s.Run(ctx, &sdk.IOTransport{Reader: lines.Reader, Writer: lines.Writer, MaxLineLength: -1})
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}
