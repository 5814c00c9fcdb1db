package controlplane

import (
	"net/http"
	"time"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Path is the control API's prefix, which the addresses a sandbox hands
// out name. It lies outside the service's base path, so it can never
// collide with the service's own paths.
const Path = "/_mock"

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
	// hidden() shows them (see request.hideTokens).
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
// request.hideTokens says so.
func (r *request) sandboxJSON(sb sim.Sandbox) (any, error) {
	return sandboxOf(r.p.Eng, sb, r.view.Base, r.hideTokens())
}

type createSandboxInput struct {
	Spec sim.SandboxSpec `body:""`
}

func createSandbox(r *request, in createSandboxInput) (int, any, error) {
	sb, err := r.p.CreateSandbox(in.Spec)
	if err != nil {
		return 0, nil, err
	}
	// Its creator gets its tokens: they are what a sandbox is for.
	out, err := sandboxOf(r.p.Eng, sb, r.view.Base, false)
	return http.StatusCreated, out, err
}

func listSandboxes(r *request, _ none) (int, any, error) {
	list := r.p.Eng.Sandboxes()
	out := wire.List[any]{Object: "list", Data: make([]any, 0, len(list))}
	for _, sb := range list {
		v, err := r.sandboxJSON(sb)
		if err != nil {
			return 0, nil, err
		}
		out.Data = append(out.Data, v)
	}
	return http.StatusOK, out, nil
}

// sandboxInput names a sandbox (sbx_...).
type sandboxInput struct {
	Sandbox string `path:"sandbox"`
}

func getSandbox(r *request, in sandboxInput) (int, any, error) {
	sb, err := r.p.Eng.Sandbox(in.Sandbox)
	if err != nil {
		return 0, nil, err
	}
	out, err := r.sandboxJSON(sb)
	return http.StatusOK, out, err
}

type deletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

func deleteSandbox(r *request, in sandboxInput) (int, any, error) {
	if err := r.p.DeleteSandbox(in.Sandbox); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deletedJSON{ID: in.Sandbox, Object: "sandbox", Deleted: true}, nil
}

func resetSandbox(r *request, in sandboxInput) (int, any, error) {
	sb, err := r.p.ResetSandbox(in.Sandbox)
	if err != nil {
		return 0, nil, err
	}
	out, err := r.sandboxJSON(sb)
	return http.StatusOK, out, err
}

type runJSON struct {
	ID      string `json:"id"`
	Applied int    `json:"events_applied"`
	Now     string `json:"now"`
}

type runInput struct {
	Sandbox string `path:"sandbox"`
	Body    struct {
		Limit string `json:"limit"`
	} `body:""`
}

// runSandbox finishes a sandbox's work now: its events due within limit
// (default one hour), without moving the shared clock.
func runSandbox(r *request, in runInput) (int, any, error) {
	limit := time.Hour
	if in.Body.Limit != "" {
		var err error
		if limit, err = time.ParseDuration(in.Body.Limit); err != nil {
			return 0, nil, sim.InvalidError([]sim.Violation{{In: "body", Field: "limit", Reason: err.Error()}})
		}
	}
	n, err := r.p.Eng.RunSandbox(in.Sandbox, limit)
	return http.StatusOK, runJSON{ID: in.Sandbox, Applied: n, Now: sim.FormatTime(r.p.Eng.Clock().Now())}, err
}
