// Package control is the control API front under /_mock: the clock,
// faults, job actions, workspaces, the journal, coverage, reset and
// snapshots, described by control.json. It drives the same engine and gate
// as the service's fronts.
package control

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Path is the reserved prefix of the control API. It lies outside the
// service's base path, so it can never collide with the service's own paths.
const Path = "/_mock"

// MaxSnapshotBytes caps a snapshot being restored.
const MaxSnapshotBytes = 4 << 30

// Front serves the control API of one server.
type Front struct {
	env      *edge.Env
	document []byte                             // control.json, served at /_mock/openapi.json
	load     func() (*contract.Contract, error) // control.json, parsed
	streams  streamSlots                        // event streams open
}

// New returns the control front of a server; document is control.json,
// which load parses (once per process, on the first request that needs it:
// a server answers its health check without it).
func New(env *edge.Env, document []byte, load func() (*contract.Contract, error)) *Front {
	return &Front{env: env, document: document, load: load}
}

// Routes lists the operations of the control API, to hold against
// control.json.
func Routes() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = rt.op
	}
	return out
}

// validate checks a control request against control.json.
func (f *Front) validate(r *http.Request, m edge.Match) error {
	c, err := f.load()
	if err != nil {
		return err
	}
	return c.ValidateRequest(r, m.Name, m.Vars, r.URL.Query())
}

// handlerFunc serves one control operation.
type handlerFunc func(c *call) (int, any, error)

type route struct {
	method, path, op string
	h                handlerFunc
}

// call is one control request.
type call struct {
	env   *edge.Env
	w     *edge.Writer
	r     *http.Request
	vars  map[string]string
	scope scope
}

func (c *call) id() uint64 {
	n, _ := strconv.ParseUint(c.vars["id"], 10, 64)
	return n
}

// decode reads an optional JSON body the contract has validated.
func (c *call) decode(v any) error {
	if c.r.ContentLength == 0 {
		return nil
	}
	return wire.DecodeJSON(c.r.Body, v)
}

// Handlers that answer by themselves rather than with JSON.
const (
	opDocument = "getControlDocument"
	opSnapshot = "getSnapshot"
	opRestore  = "restoreSnapshot"
	opHealth   = "getHealth"
	opMetrics  = "getMetrics"
)

var table = sync.OnceValue(func() *edge.Table {
	t := edge.NewTable(Path)
	for _, rt := range routes {
		t.Add(rt.method, rt.path, rt.op)
	}
	return t.Seal()
})

var handlers = sync.OnceValue(func() map[string]handlerFunc {
	m := make(map[string]handlerFunc, len(routes))
	for _, rt := range routes {
		m[rt.op] = rt.h
	}
	return m
})

// BodyLimit is the cap of a control request's body: snapshots have their own.
func (f *Front) BodyLimit(r *http.Request) (int64, error) {
	if r.URL.Path == Path+"/snapshot" && r.Method == http.MethodPut {
		return MaxSnapshotBytes, problem.TooLarge(MaxSnapshotBytes)
	}
	return f.env.BodyCap(r)
}

// Serve serves a control request that passed the edge.
func (f *Front) Serve(w *edge.Writer, r *http.Request) {
	if max, tooBig := f.BodyLimit(r); !edge.LimitBody(w, r, max, tooBig) {
		return
	}
	m := table().Match(r)
	switch {
	case m.Allow != "":
		w.Header().Set("Allow", m.Allow)
		edge.WriteError(w, wire.MethodNotAllowed(r.Method, r.URL.Path, m.Allow, strings.Split(m.Allow, ", ")))
		return
	case m.Name == "":
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	w.SetAnswer(m.Name, "") // for the metrics
	c := &call{env: f.env, w: w, r: r, vars: m.Vars}
	if m.Name != opHealth {
		var err error
		if c.scope, err = f.guard(r, m.Name); err == nil {
			c.scope, err = f.narrow(c.scope, r, m.Name, m.Vars)
		}
		if err == nil {
			err = c.ownRecord(m.Name)
		}
		if err != nil {
			edge.WriteError(w, err)
			return
		}
	}
	switch m.Name {
	case opDocument:
		edge.ServeDocument(w, r, f.document)
	case opSnapshot:
		c.snapshot()
	case opRestore:
		// Streamed to a file as it comes: the validator would buffer it.
		status, body, err := c.restore()
		edge.Answer(w, status, body, err)
	case opEvents:
		if err := f.validate(r, m); err != nil {
			edge.WriteError(w, err)
			return
		}
		f.events(c)
	case opMetrics:
		if err := f.validate(r, m); err != nil {
			edge.WriteError(w, err)
			return
		}
		f.env.Metrics.Handler().ServeHTTP(w, r)
	case opHealth: // no parameters, no body: nothing to validate
		status, body, err := health(c)
		edge.Answer(w, status, body, err)
	default:
		if err := f.validate(r, m); err != nil {
			edge.WriteError(w, err)
			return
		}
		status, body, err := handlers()[m.Name](c)
		edge.Answer(w, status, body, err)
	}
}

// guard protects the control API: from web pages (a foreign Host or
// Origin), with the control token when the server has one (or a
// sandbox's, for that sandbox alone), and with a JSON Content-Type on every
// state-changing request, which a page cannot send across origins without a
// preflight. On a listener beyond loopback, snapshots (the whole state,
// tokens included) need a control token. It returns the scope the
// credential reaches.
func (f *Front) guard(r *http.Request, op string) (scope, error) {
	if err := f.env.Guard(r, "the control API"); err != nil {
		return scope{}, err
	}
	s, err := f.credential(r, op)
	if err != nil {
		return s, err
	}
	if (op == opSnapshot || op == opRestore) && f.env.Exposed && f.env.ControlToken == "" {
		return s, &sim.Error{Kind: sim.EFORBIDDEN, Code: "control_token_required",
			Message: "The server listens beyond loopback without a control token: snapshots (every token included) need --control-token (MOCKSERVER_CONTROL_TOKEN)."}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && op != opRestore {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			got := r.Header.Get("Content-Type")
			if got == "" {
				got = "(none)"
			}
			return s, &sim.Error{Kind: sim.EUNSUPPORTED, Code: "unsupported_media_type",
				Message: "Content-Type " + got + " is not accepted; state-changing control requests send application/json (an empty body may be {}).",
				Details: map[string]any{"accepted": []string{"application/json"}}}
		}
	}
	return s, nil
}

// Authorize refuses a request to the control MCP server that the control
// API would refuse whatever its operation: a foreign Host or Origin, or a
// credential that is neither the server's control token nor a live
// sandbox's (with neither configured, none is needed). Each tool call is
// then a control request of its own, judged as every other.
func (f *Front) Authorize(r *http.Request) error {
	if err := f.env.Guard(r, "the control MCP server"); err != nil {
		return err
	}
	_, err := f.credential(r, "")
	return err
}
