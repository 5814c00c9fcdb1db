package control

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// scope is whose faults, journal and coverage a control call reads or
// changes, and how far its credential reaches.
//
//   - The server's control token (or none, when the server has none)
//     reaches everything. A call is global unless it names a sandbox
//     (?sandbox=sbx_...) or a workspace (?workspace_id=4).
//   - A sandbox's control token reaches that sandbox alone: every scoped
//     call is the sandbox's, the records of other workspaces are not found,
//     and what is shared (the clock, reset, snapshots, other sandboxes, the
//     workspaces) is refused with 403.
type scope struct {
	ws      uint64       // gate.Global: the whole server
	sandbox *sim.Sandbox // the sandbox ws is, if it is one
	bound   bool         // the credential is the sandbox's control token
}

// credential works out the scope a credential reaches: a sandbox's control
// token binds the call to its sandbox; the server's control token reaches
// the whole server. A server without a control token is open to a request
// that sends no credential (the local default), but a credential that was
// sent must be valid: a deleted sandbox's token, or any other that is
// neither the server's nor a live sandbox's, is refused, never taken as the
// server's own (a suite holding a stale token must not steer every other).
func (f *Front) credential(r *http.Request, op string) (scope, error) {
	header := r.Header.Get("Authorization")
	got, _ := strings.CutPrefix(header, "Bearer ")
	if got == "" && op == opEvents {
		got = r.URL.Query().Get("token")
	}
	if strings.HasPrefix(got, "sbc_") {
		if sb, ok := f.env.Eng.SandboxByControlToken(got); ok {
			return scope{ws: sb.WorkspaceID, sandbox: &sb, bound: true}, nil
		}
	}
	tok := f.env.ControlToken
	switch {
	case tok != "" && subtle.ConstantTimeCompare([]byte(got), []byte(tok)) == 1:
		return scope{}, nil
	case tok == "" && got == "":
		return scope{}, nil
	case tok == "":
		return scope{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_control_token",
			Message: "The control token sent is neither a live sandbox's nor the server's (this server has none: send no Authorization header to reach the whole server). A deleted sandbox's token reaches nothing."}
	}
	return scope{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_control_token",
		Message: "The control API needs Authorization: Bearer <control token>: the server's, or a sandbox's for that sandbox alone."}
}

// reach is how a sandbox's control token reaches an operation, as
// control.json says in its x-sandbox extension: "scoped" (the operation
// takes ?sandbox= or ?workspace_id=, and the token scopes it to the
// sandbox), "own" (the sandbox's own records only) or "shared" (refused).
// An operation that does not say is shared.
func (f *Front) reach(op string) string {
	c, err := f.load()
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

// narrow applies the query's scope (sandbox, workspace_id) to a call of op,
// and refuses what a sandbox's token may not reach.
func (f *Front) narrow(s scope, r *http.Request, op string, vars map[string]string) (scope, error) {
	reach := f.reach(op)
	if s.bound && reach == "shared" {
		return s, outside(op)
	}
	if reach != "scoped" {
		return s, nil
	}
	q := r.URL.Query()
	if id := q.Get("sandbox"); id != "" {
		sb, err := f.env.Eng.Sandbox(id)
		if err != nil {
			return s, err
		}
		if s.bound && sb.ID != s.sandbox.ID {
			return s, outside(op)
		}
		return scope{ws: sb.WorkspaceID, sandbox: &sb, bound: s.bound}, nil
	}
	if raw := q.Get("workspace_id"); raw != "" && op != "getJournal" {
		ws, _ := strconv.ParseUint(raw, 10, 64)
		if s.bound {
			if ws != s.ws {
				return s, outside(op)
			}
			return s, nil
		}
		if _, err := f.env.Eng.WorkspaceDetail(ws); err != nil {
			return s, err
		}
		out := scope{ws: ws}
		if sb, ok := f.env.Eng.SandboxOf(ws); ok {
			out.sandbox = &sb
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
func (c *call) ownRecord(op string) error {
	if !c.scope.bound {
		return nil
	}
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
		ws = c.id()
	case "getSandbox", "deleteSandbox", "resetSandbox", "runSandbox":
		if c.vars["sandbox"] != c.scope.sandbox.ID {
			return outside(op)
		}
		return nil
	default:
		return nil
	}
	if what != "" {
		var err error
		if ws, err = c.env.Eng.Owner(what, c.id()); err != nil {
			return err
		}
		if ws != c.scope.ws {
			return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No " + what + " " + c.vars["id"] + " in this sandbox.",
				Details: map[string]any{"resource": what, "id": c.id()}}
		}
		return nil
	}
	if ws != c.scope.ws {
		return outside(op)
	}
	return nil
}

// sandboxJSON is a sandbox as the control API shows it: what a test suite
// needs to use it.
type sandboxJSON struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Name        string `json:"name"`
	From        string `json:"from"`
	WorkspaceID uint64 `json:"workspace_id"`
	// Keys are the sandbox's keys by name (all_scopes, read_only, ...);
	// APIKey is the API key with the most scopes, the one to use by default.
	Keys   map[string]string `json:"keys"`
	APIKey string            `json:"api_key"`
	Tokens []tokenJSON       `json:"tokens"`
	// ControlToken reaches the control API for this sandbox alone.
	ControlToken string `json:"control_token"`
	// TokensHidden: keys, api_key, tokens and control_token are shown as
	// hidden() shows them (see call.hideTokens).
	TokensHidden bool `json:"tokens_hidden"`
	// BaseURL is the service's base address ({base_url}), MCPURL the MCP
	// server's, ControlURL the control API's.
	BaseURL        string `json:"base_url"`
	MCPURL         string `json:"mcp_url"`
	ControlURL     string `json:"control_url"`
	Plan           string `json:"plan"`
	CreditsBalance int64  `json:"credits_balance"`
	RateLimit      int    `json:"rate_limit_per_minute"`
	CreatedAt      string `json:"created_at"`
}

// sandboxOf renders a sandbox, with addresses built from base (the
// server's root address as the caller reaches it).
func sandboxOf(eng *sim.Engine, sb sim.Sandbox, base string, hide bool) (any, error) {
	d, err := eng.WorkspaceDetail(sb.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := sandboxJSON{ID: sb.ID, Object: "sandbox", Name: sb.Name, From: sb.From, WorkspaceID: sb.WorkspaceID,
		Keys: sb.Keys(), APIKey: sb.APIKey(), Tokens: []tokenJSON{}, ControlToken: sb.ControlToken,
		BaseURL: base + wire.BasePath, MCPURL: base + "/mcp", ControlURL: base + Path,
		Plan: d.Plan, CreditsBalance: d.Balance, RateLimit: d.RateLimit, CreatedAt: sb.CreatedAt.String()}
	for _, t := range sb.Tokens {
		out.Tokens = append(out.Tokens, tokenJSON{Token: t.Token, Masked: mask(t.Token), Type: t.Type, Name: t.Name, Scopes: t.Scopes})
	}
	if hide {
		out.TokensHidden = true
		for name, k := range out.Keys {
			out.Keys[name] = hidden(k)
		}
		out.APIKey, out.ControlToken = hidden(out.APIKey), hidden(out.ControlToken)
		for i := range out.Tokens {
			out.Tokens[i].Token, out.Tokens[i].Masked = hidden(out.Tokens[i].Token), hidden(out.Tokens[i].Token)
		}
	}
	return out, nil
}

// sandboxJSON renders a sandbox for a read: its tokens hidden when
// call.hideTokens says so.
func (c *call) sandboxJSON(sb sim.Sandbox) (any, error) {
	return sandboxOf(c.env.Eng, sb, c.env.View(c.r).Base, c.hideTokens())
}

func createSandbox(c *call) (int, any, error) {
	var spec sim.SandboxSpec
	if err := c.decode(&spec); err != nil {
		return 0, nil, err
	}
	sb, err := c.env.CreateSandbox(spec)
	if err != nil {
		return 0, nil, err
	}
	// Its creator gets its tokens: they are what a sandbox is for.
	out, err := sandboxOf(c.env.Eng, sb, c.env.View(c.r).Base, false)
	return http.StatusCreated, out, err
}

func listSandboxes(c *call) (int, any, error) {
	list := c.env.Eng.Sandboxes()
	out := wire.List[any]{Object: "list", Data: make([]any, 0, len(list))}
	for _, sb := range list {
		v, err := c.sandboxJSON(sb)
		if err != nil {
			return 0, nil, err
		}
		out.Data = append(out.Data, v)
	}
	return http.StatusOK, out, nil
}

func getSandbox(c *call) (int, any, error) {
	sb, err := c.env.Eng.Sandbox(c.vars["sandbox"])
	if err != nil {
		return 0, nil, err
	}
	out, err := c.sandboxJSON(sb)
	return http.StatusOK, out, err
}

type deletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

func deleteSandbox(c *call) (int, any, error) {
	id := c.vars["sandbox"]
	if err := c.env.DeleteSandbox(id); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deletedJSON{ID: id, Object: "sandbox", Deleted: true}, nil
}

func resetSandbox(c *call) (int, any, error) {
	sb, err := c.env.ResetSandbox(c.vars["sandbox"])
	if err != nil {
		return 0, nil, err
	}
	out, err := c.sandboxJSON(sb)
	return http.StatusOK, out, err
}

type runJSON struct {
	ID      string `json:"id"`
	Applied int    `json:"events_applied"`
	Now     string `json:"now"`
}

// runSandbox finishes a sandbox's work now: its events due within limit
// (default one hour), without moving the shared clock.
func runSandbox(c *call) (int, any, error) {
	var body struct {
		Limit string `json:"limit"`
	}
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	limit := time.Hour
	if body.Limit != "" {
		var err error
		if limit, err = time.ParseDuration(body.Limit); err != nil {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "limit", Reason: err.Error()}})
		}
	}
	id := c.vars["sandbox"]
	n, err := c.env.Eng.RunSandbox(id, limit)
	return http.StatusOK, runJSON{ID: id, Applied: n, Now: sim.FormatTime(c.env.Eng.Clock().Now())}, err
}
