package controlplane

import (
	"net/http"
	"strings"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

type workspaceJSON struct {
	ID                uint64 `json:"id"`
	Name              string `json:"name"`
	SandboxID         string `json:"sandbox_id,omitempty"`
	Plan              string `json:"plan"`
	CreditsBalance    int64  `json:"credits_balance"`
	RateLimit         int    `json:"rate_limit_per_minute"`
	PublishingAllowed bool   `json:"publishing_allowed"`
}

func listWorkspaces(r *request, _ none) (int, any, error) {
	list, err := r.p.Eng.Workspaces()
	out := make([]workspaceJSON, 0, len(list))
	for _, w := range list {
		out = append(out, r.workspaceJSON(w))
	}
	return http.StatusOK, out, err
}

// workspaceJSON renders a workspace, naming the sandbox it is, if any.
func (r *request) workspaceJSON(w sim.Workspace) workspaceJSON {
	out := workspaceJSON{ID: w.ID, Name: w.Name, Plan: w.Plan, CreditsBalance: w.Balance, RateLimit: w.RateLimit, PublishingAllowed: w.PublishingAllowed}
	if sb, ok := r.p.Eng.SandboxOf(w.ID); ok {
		out.SandboxID = sb.ID
	}
	return out
}

type addWorkspaceInput struct {
	Spec sim.WorkspaceSpec `body:""`
}

func addWorkspace(r *request, in addWorkspaceInput) (int, any, error) {
	ws, err := r.p.Eng.AddWorkspace(in.Spec)
	return http.StatusCreated, ws, err
}

type addTokenInput struct {
	ID   uint64        `path:"id"`
	Spec sim.TokenSpec `body:""`
}

func addToken(r *request, in addTokenInput) (int, any, error) {
	tok, err := r.p.Eng.AddToken(in.ID, in.Spec)
	return http.StatusCreated, tok, err
}

type balanceJSON struct {
	WorkspaceID uint64 `json:"workspace_id"`
	Balance     int64  `json:"credits_balance"`
}

type grantInput struct {
	ID   uint64 `path:"id"`
	Body struct {
		Amount int64  `json:"amount"`
		Note   string `json:"note"`
	} `body:""`
}

func grant(r *request, in grantInput) (int, any, error) {
	bal, err := r.p.Eng.GrantCredits(in.ID, in.Body.Amount, in.Body.Note)
	return http.StatusOK, balanceJSON{WorkspaceID: in.ID, Balance: bal}, err
}

type ledgerJSON struct {
	WorkspaceID uint64            `json:"workspace_id"`
	Balance     int64             `json:"credits_balance"`
	Entries     []sim.LedgerEntry `json:"entries"`
}

func ledger(r *request, in idInput) (int, any, error) {
	bal, err := r.p.Eng.Balance(in.ID)
	if err != nil {
		return 0, nil, err
	}
	entries, err := r.p.Eng.Ledger(in.ID)
	if entries == nil {
		entries = []sim.LedgerEntry{}
	}
	return http.StatusOK, ledgerJSON{WorkspaceID: in.ID, Balance: bal, Entries: entries}, err
}

// --- one workspace in detail

type workspaceDetailJSON struct {
	workspaceJSON
	MonthlyGifts []wire.Gift    `json:"monthly_gifts"`
	RateWindow   rateWindowJSON `json:"rate_window"`
	Tokens       []tokenJSON    `json:"tokens"`
	TokensHidden bool           `json:"tokens_hidden"`
	CreatedAt    string         `json:"created_at"`
}

// rateWindowJSON is the current rate-limit window, read without counting.
type rateWindowJSON struct {
	Limit     int    `json:"limit"`
	Used      int    `json:"used"`
	Remaining int    `json:"remaining"`
	ResetsAt  string `json:"resets_at"`
}

type tokenJSON struct {
	Token  string   `json:"token"`
	Masked string   `json:"masked"`
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// mask shows a token's prefix and its last four characters (its name
// tells it from the others).
func mask(tok string) string {
	if len(tok) < 16 {
		return tok[:min(3, len(tok))] + "…"
	}
	return tok[:8] + "…" + tok[len(tok)-4:]
}

// hideTokens says whether a read leaves tokens out: on a listener beyond
// loopback without a control token, anyone who reaches the port reads the
// control API, so tokens are shown as hidden() shows them, as snapshots
// are refused. A sandbox's own control token sees its sandbox's tokens.
func (r *request) hideTokens() bool {
	return r.p.Exposed && r.p.ControlToken == "" && !r.scope.Bound
}

// hidden shows a token's form and nothing of its secret: the prefix up to
// its first underscore and an ellipsis (mk_…).
func hidden(tok string) string {
	if i := strings.IndexByte(tok, '_'); i > 0 && i <= 4 {
		return tok[:i+1] + "…"
	}
	return "…"
}

func getWorkspace(r *request, in idInput) (int, any, error) {
	d, err := r.p.Eng.WorkspaceDetail(in.ID)
	if err != nil {
		return 0, nil, err
	}
	out := workspaceDetailJSON{
		workspaceJSON: r.workspaceJSON(d.Workspace),
		MonthlyGifts:  []wire.Gift{}, Tokens: []tokenJSON{}, CreatedAt: d.CreatedAt.String(),
		RateWindow: rateWindowJSON{Limit: d.Rate.Limit, Used: d.Rate.Limit - d.Rate.Remaining, Remaining: d.Rate.Remaining,
			ResetsAt: sim.FormatTime(d.Rate.Reset)},
	}
	for _, g := range d.Gifts {
		out.MonthlyGifts = append(out.MonthlyGifts, wire.Gift{ModelID: g.ModelID, Remaining: g.Remaining, PerMonth: g.PerMonth, RenewsAt: sim.FormatTime(g.RenewsAt)})
	}
	out.TokensHidden = r.hideTokens()
	for _, t := range d.Tokens {
		tj := tokenJSON{Token: t.Token, Masked: mask(t.Token), Type: t.Type, Name: t.Name, Scopes: t.Scopes}
		if out.TokensHidden {
			tj.Token, tj.Masked = hidden(t.Token), hidden(t.Token)
		}
		out.Tokens = append(out.Tokens, tj)
	}
	return http.StatusOK, out, nil
}
