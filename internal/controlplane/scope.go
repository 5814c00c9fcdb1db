package controlplane

import (
	"crypto/subtle"
	"net/url"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/bearer"
	"github.com/mediamock/mediamock/sim"
)

// Scope is whose faults, journal and coverage a control call reads or
// changes, and how far its credential reaches.
//
//   - The server's control token (or none, when the server has none)
//     reaches everything. A call is global unless it names a sandbox
//     (?sandbox=sbx_...) or a workspace (?workspace_id=4).
//   - A sandbox's control token reaches that sandbox alone: every scoped
//     call is the sandbox's, the records of other workspaces are not found,
//     and what is shared (the clock, reset, snapshots, other sandboxes, the
//     workspaces) is refused with 403.
type Scope struct {
	// WS is the workspace, 0 (fault.Global) for the whole server.
	WS uint64
	// Sandbox is the sandbox WS is, if it is one.
	Sandbox *sim.Sandbox
	// Bound: the credential is the sandbox's control token.
	Bound bool
}

// opEvents takes its credential from the query too: a browser's
// EventSource cannot send headers.
const opEvents = "streamEvents"

// Credential works out the scope a credential (an Authorization header
// value) reaches for a call of op: a sandbox's control token binds the
// call to its sandbox; the server's control token reaches the whole
// server. A server without a control token is open to a call that sends no
// credential (the local default), but a credential that was sent must be
// valid: a deleted sandbox's token, or any other that is neither the
// server's nor a live sandbox's, is refused, never taken as the server's
// own (a suite holding a stale token must not steer every other). op ""
// judges the credential alone.
func (p *Plane) Credential(op, authorization string, query url.Values) (Scope, error) {
	got := authorization
	if token, ok := bearer.Token(authorization); ok {
		got = token // any other credential is compared whole, and refused
	}
	if got == "" && op == opEvents {
		got = query.Get("token")
	}
	if strings.HasPrefix(got, "sbc_") {
		if sb, ok := p.Eng.SandboxByControlToken(got); ok {
			return Scope{WS: sb.WorkspaceID, Sandbox: &sb, Bound: true}, nil
		}
	}
	tok := p.ControlToken
	switch {
	case tok != "" && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1:
		return Scope{}, nil
	case tok == "" && got == "":
		return Scope{}, nil
	case tok == "":
		return Scope{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_control_token",
			Message: "The control token sent is neither a live sandbox's nor the server's (this server has none: send no Authorization header to reach the whole server). A deleted sandbox's token reaches nothing."}
	}
	return Scope{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_control_token",
		Message: "The control API needs Authorization: Bearer <control token>: the server's, or a sandbox's for that sandbox alone."}
}

// reach is how a sandbox's control token reaches an operation, as
// control.json says in its x-sandbox extension: "scoped" (the operation
// takes ?sandbox= or ?workspace_id=, and the token scopes it to the
// sandbox), "own" (the sandbox's own records only) or "shared" (refused).
// An operation that does not say is shared.
func (p *Plane) reach(op string) string {
	c, err := p.Document()
	if err != nil {
		return "shared"
	}
	if v, ok := c.Extension(op, "x-sandbox"); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return "shared"
}

// Narrow applies a call's query scope (sandbox, workspace_id) to the scope
// s its credential reaches, refuses what a sandbox's token may not reach,
// and checks that a record the call names (vars) is the sandbox's own.
func (p *Plane) Narrow(op string, s Scope, vars map[string]string, query url.Values) (Scope, error) {
	s, err := p.narrow(s, op, query)
	if err == nil {
		err = p.ownRecord(s, op, vars)
	}
	return s, err
}

func (p *Plane) narrow(s Scope, op string, q url.Values) (Scope, error) {
	reach := p.reach(op)
	if s.Bound && reach == "shared" {
		return s, outside(op)
	}
	if reach != "scoped" {
		return s, nil
	}
	if id := q.Get("sandbox"); id != "" {
		sb, err := p.Eng.Sandbox(id)
		if err != nil {
			return s, err
		}
		if s.Bound && sb.ID != s.Sandbox.ID {
			return s, outside(op)
		}
		return Scope{WS: sb.WorkspaceID, Sandbox: &sb, Bound: s.Bound}, nil
	}
	if raw := q.Get("workspace_id"); raw != "" && op != "getJournal" {
		ws, _ := strconv.ParseUint(raw, 10, 64)
		if s.Bound {
			if ws != s.WS {
				return s, outside(op)
			}
			return s, nil
		}
		if _, err := p.Eng.WorkspaceDetail(ws); err != nil {
			return s, err
		}
		out := Scope{WS: ws}
		if sb, ok := p.Eng.SandboxOf(ws); ok {
			out.Sandbox = &sb
		}
		return out, nil
	}
	return s, nil
}

// outside refuses what a sandbox's control token may not reach.
func outside(op string) error {
	switch op {
	case "advanceClock", "setClock", "setClockMode", "resyncClock":
		return &sim.Error{Kind: sim.EFORBIDDEN, Code: "clock_is_shared",
			Message: "Every sandbox shares the server's one clock: a sandbox's control token cannot move it. Finish this sandbox's jobs now with POST /_mock/sandboxes/{id}/run (or fail or complete one with POST /_mock/assets/{id}/{action}); the server's control token moves the clock.",
			Details: map[string]any{"operation": op}}
	}
	return &sim.Error{Kind: sim.EFORBIDDEN, Code: "outside_sandbox",
		Message: "A sandbox's control token reaches its own sandbox only; " + op + " needs the server's control token.",
		Details: map[string]any{"operation": op}}
}

// ownRecord checks that a record a call names belongs to the sandbox its
// token is bound to: another workspace's is not found, as in the
// service's API.
func (p *Plane) ownRecord(s Scope, op string, vars map[string]string) error {
	if !s.Bound {
		return nil
	}
	id, _ := strconv.ParseUint(vars["id"], 10, 64)
	var what string
	var ws uint64
	switch op {
	case "controlAsset":
		what = "asset"
	case "controlEncore":
		what = "encore"
	case "cancelPublication":
		what = "publication"
	case "getWorkspace", "addToken", "grantCredits", "getLedger":
		ws = id
	case "getSandbox", "deleteSandbox", "resetSandbox", "runSandbox":
		if vars["sandbox"] != s.Sandbox.ID {
			return outside(op)
		}
		return nil
	default:
		return nil
	}
	if what != "" {
		var err error
		if ws, err = p.Eng.Owner(what, id); err != nil {
			return err
		}
		if ws != s.WS {
			return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No " + what + " " + vars["id"] + " in this sandbox.",
				Details: map[string]any{"resource": what, "id": id}}
		}
		return nil
	}
	if ws != s.WS {
		return outside(op)
	}
	return nil
}

// Challenge is the WWW-Authenticate header of a 401 of the control API and
// of the control MCP server (RFC 9110, section 15.5.2; RFC 6750, section
// 3): a bare Bearer challenge of the control realm when no bearer token
// was sent, error="invalid_token" when one was that is neither the
// server's control token nor a live sandbox's; "" for a refusal that is
// not a 401. The realm is not the service's ("api"): its tokens are
// control tokens.
func Challenge(authorization string, err error) string {
	if sim.AsError(err).Kind != sim.EUNAUTHORIZED {
		return ""
	}
	if token, ok := bearer.Token(authorization); !ok || token == "" {
		return `Bearer realm="control"`
	}
	return `Bearer realm="control", error="invalid_token"`
}
