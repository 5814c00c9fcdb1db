// Package router sends each request of a server, through the edge (request
// id, body cap, panic recovery, journal: edge.Env.Serve), to the front
// that serves its path: the local certificate authority, the dashboard,
// the control API, the authorization server, the MCP server or the REST
// API.
package router

import (
	"bytes"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/dashboard"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/mcp"
	"github.com/mediamock/mediamock/internal/oauth"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/rest"
	"github.com/mediamock/mediamock/internal/wire"
)

// Config is what the fronts are made with.
type Config struct {
	// Service and Control are the OpenAPI documents the REST front and the
	// control API serve; LoadControl parses the control one.
	Service, Control []byte
	LoadControl      func() (*contract.Contract, error)
	// Plane is the control plane the control API and the control MCP
	// server call.
	Plane *controlplane.Plane
	// CAPath is where the certificate authority (Fronts.CA) is served.
	CAPath string
	// OAuthApprove, when not zero, approves every authorization request at
	// once for that workspace (oauth.Server.Approve).
	OAuthApprove uint64
}

// Fronts are a server's fronts, and the doors their requests enter the
// edge by.
type Fronts struct {
	env  *edge.Env
	ops  *ops.Env // the operations' pipeline, which REST and MCP call
	rest *rest.Front
	ctl  *control.Front
	ui   *dashboard.Front
	auth *oauth.Server
	// mcp is made on the first MCP request: most servers of a test suite
	// never see one, and its tools cost a millisecond to build.
	mcp     *mcp.Front
	mcpErr  error
	mcpOnce sync.Once
	mcpLive atomic.Pointer[mcp.Front] // mcp once made, for readers outside mcpOnce
	mcpDoor edge.Door
	// ctlMCP, the control MCP server, is made on first use too.
	ctlMCP     *mcp.Control
	ctlMCPErr  error
	ctlMCPOnce sync.Once
	ctlMCPDoor edge.Door
	loadCtl    func() (*contract.Contract, error)
	plane      *controlplane.Plane
	caPath     string
	// CA, when set before the server serves, is the certificate authority
	// served at Config.CAPath.
	CA []byte
}

// The doors: how each front's requests enter the edge.
var (
	// REST caps bodies itself, after authentication.
	restDoor = edge.Door{Front: "rest", Journaled: true, Faults: true}
	// The dashboard's own thumbnails and files stay out of the journal.
	pageDoor  = edge.Door{Front: "rest"}
	ctlDoor   = edge.Door{Front: "control"} // caps bodies itself
	uiDoor    = edge.Door{Front: "dashboard"}
	oauthDoor = edge.Door{Front: "oauth"}
)

// New makes the fronts of env (but the MCP one, made on first use).
func New(env *edge.Env, c Config) *Fronts {
	pipeline := Pipeline(env)
	f := &Fronts{env: env, ops: pipeline, rest: rest.New(env, pipeline, c.Service), ctl: control.New(env, c.Plane, c.Control),
		ui: dashboard.New(env), auth: oauth.New(env), caPath: c.CAPath, loadCtl: c.LoadControl, plane: c.Plane}
	// MCP checks its tool results itself: its HTTP bodies are JSON-RPC.
	f.mcpDoor = edge.Door{Front: "mcp", Journaled: true, Faults: true, BodyLimit: env.BodyCap}
	// The control MCP server stays out of the journal, as the control API
	// does, and meets no fault.
	f.ctlMCPDoor = edge.Door{Front: "control", BodyLimit: env.BodyCap}
	f.auth.Approve = c.OAuthApprove
	if c.Plane != nil {
		// A deleted sandbox's OAuth clients, codes and tokens go at once.
		c.Plane.SandboxDeleted = f.auth.ForgetSandbox
	}
	return f
}

// Pipeline is the operations' pipeline of a server whose edge is env: the
// same engine, gate, contract, fault rules, coverage and log; the edge's
// Delay for the latency of a call no edge carries; its own-file check for
// the image sources that may be the server's own files.
func Pipeline(env *edge.Env) *ops.Env {
	return &ops.Env{Eng: env.Eng, Gate: env.Gate, Rules: env.Rules, API: env.API, Coverage: env.Coverage, Log: env.Log,
		Strict: env.Strict, Stop: env.Stop, Delay: env.Delay, MaxBodyBytes: env.MaxBodyBytes, OwnFileURL: env.IsOwnFile}
}

// ServeHTTP serves a request: every request passes the edge, then the
// authority takes its path (when CA is set), the dashboard /_mock/ui (and
// GET /, which leads there), the control API the rest of /_mock, the
// authorization server /oauth/ and its /.well-known/ metadata, the MCP
// server /mcp and the REST front everything else.
func (f *Fronts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	env := f.env
	switch {
	case f.CA != nil && r.URL.Path == f.caPath:
		env.Serve(w, r, uiDoor, f.serveCA)
	case dashboard.Serves(r):
		env.Serve(w, r, uiDoor, f.ui.Serve)
	case r.URL.Path == mcp.ControlPath:
		env.Serve(w, r, f.ctlMCPDoor, func(w *edge.Writer, r *http.Request) {
			c, err := f.ControlMCP()
			if err != nil {
				edge.WriteError(w, err)
				return
			}
			c.Serve(w, r)
		})
	case edge.HasPathPrefix(r.URL.Path, control.Path):
		env.Serve(w, r, ctlDoor, f.ctl.Serve)
	case oauth.Serves(r):
		env.Serve(w, r, oauthDoor, f.auth.Serve)
	case edge.HasPathPrefix(r.URL.Path, mcp.Path):
		env.Serve(w, r, f.mcpDoor, func(w *edge.Writer, r *http.Request) {
			m, err := f.MCP()
			if err != nil {
				edge.WriteError(w, err)
				return
			}
			m.Serve(w, r)
		})
	case dashboard.Fetched(r):
		env.Serve(w, r, pageDoor, f.rest.Serve)
	default:
		env.Serve(w, r, restDoor, f.rest.Serve)
	}
}

// MCP is the MCP front, made on first use.
func (f *Fronts) MCP() (*mcp.Front, error) {
	f.mcpOnce.Do(func() {
		f.mcp, f.mcpErr = mcp.New(f.env, f.ops)
		if f.mcpErr == nil {
			f.mcpLive.Store(f.mcp)
		}
	})
	return f.mcp, f.mcpErr
}

// MCPSessions counts the MCP sessions open (none before the MCP front is
// made).
func (f *Fronts) MCPSessions() int {
	if m := f.mcpLive.Load(); m != nil {
		return m.OpenSessions()
	}
	return 0
}

// ControlMCP is the control MCP server, made on first use: its tools are
// the control plane's operations.
func (f *Fronts) ControlMCP() (*mcp.Control, error) {
	f.ctlMCPOnce.Do(func() {
		doc, err := f.loadCtl()
		if err != nil {
			f.ctlMCPErr = err
			return
		}
		f.ctlMCP, f.ctlMCPErr = mcp.NewControl(f.env, mcp.ControlConfig{Document: doc, Prefix: control.Path, Plane: f.plane})
	})
	return f.ctlMCP, f.ctlMCPErr
}

// serveCA serves the authority a client trusts.
func (f *Fronts) serveCA(w *edge.Writer, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		edge.WriteError(w, wire.MethodNotAllowed(r.Method, "the certificate authority", "GET, HEAD", []string{"GET", "HEAD"}))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="mediamock-ca.pem"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.CA))
}
