package sim

import (
	"fmt"
	"slices"

	"github.com/mediamock/mediamock/fixtures"
)

// WorkspaceSpec describes a workspace to add at run time.
type WorkspaceSpec struct {
	Name               string   `json:"name"`
	Plan               string   `json:"plan"`
	Credits            int      `json:"credits"`
	RateLimitPerMinute int      `json:"rate_limit_per_minute,omitempty"`
	Scopes             []string `json:"scopes,omitempty"` // of the API key made with it; default all
	Token              string   `json:"token,omitempty"`  // the API key; made up when empty
}

// NewWorkspace is a workspace added at run time and its first API key.
type NewWorkspace struct {
	WorkspaceID uint64   `json:"workspace_id"`
	Name        string   `json:"name"`
	Plan        string   `json:"plan"`
	Credits     int64    `json:"credits"`
	RateLimit   int      `json:"rate_limit_per_minute"`
	Token       string   `json:"token"`
	Scopes      []string `json:"scopes"`
}

// AddWorkspace creates a workspace with an API key.
func (e *Engine) AddWorkspace(spec WorkspaceSpec) (NewWorkspace, error) {
	var v Violations
	if spec.Plan == "" {
		spec.Plan = "pro"
	}
	if _, ok := e.world.Plans[spec.Plan]; !ok {
		v.AddAllowed("plan", anySlice(planIDs(e.world)), "unknown plan %q", spec.Plan)
	}
	if spec.Credits < 0 {
		v.Add("credits", "must not be negative")
	}
	if spec.RateLimitPerMinute < 0 {
		v.Add("rate_limit_per_minute", "must not be negative")
	}
	if len(spec.Scopes) == 0 {
		spec.Scopes = []string{ScopeRead, ScopeGenerate, ScopePublish}
	}
	checkScopes(&v, spec.Scopes)
	if err := v.Err(); err != nil {
		return NewWorkspace{}, err
	}
	var out NewWorkspace
	err := e.update(func(t *tx) error {
		// Every check comes before the first write.
		next := t.b(bWorkspaces).Sequence() + 1
		tok := spec.Token
		if tok != "" && t.b(bTokens).Get([]byte(tok)) != nil {
			return tokenTaken()
		}
		if tok == "" {
			tok = t.freeToken("mk_test_ws", next)
		}
		if spec.Name == "" {
			spec.Name = fmt.Sprintf("Workspace %d", next)
		}
		fw := fixtures.Workspace{Name: spec.Name, Plan: spec.Plan, Credits: spec.Credits, RateLimitPerMinute: spec.RateLimitPerMinute}
		ws, err := t.addWorkspace(fw)
		if err != nil {
			return err
		}
		newTok := Token{Token: tok, WorkspaceID: ws.ID, Type: "api_key", Name: "control API", Scopes: spec.Scopes}
		if err := t.putToken(newTok); err != nil {
			return err
		}
		t.addedWorkspaces = append(t.addedWorkspaces, ws)
		t.addedTokens = append(t.addedTokens, newTok)
		out = NewWorkspace{WorkspaceID: ws.ID, Name: ws.Name, Plan: ws.Plan, Credits: ws.Balance, RateLimit: ws.RateLimit, Token: tok, Scopes: spec.Scopes}
		return nil
	})
	return out, err
}

// TokenSpec describes a token to add to a workspace.
type TokenSpec struct {
	Type   string   `json:"type,omitempty"` // api_key (default) or oauth
	Name   string   `json:"name,omitempty"`
	Scopes []string `json:"scopes"`
	Token  string   `json:"token,omitempty"` // made up when empty
	// ExpiresAt, when not zero, ends the token (Unix seconds, simulated
	// clock); only the authorization server sets it.
	ExpiresAt int64 `json:"-"`
	// Resources bind an access token to protected resources ("/mcp",
	// "/api/v1"; empty: every one); only the authorization server sets it.
	Resources []string `json:"-"`
}

// AddToken adds an API key or OAuth access token to a workspace.
func (e *Engine) AddToken(workspaceID uint64, spec TokenSpec) (Token, error) {
	var v Violations
	if spec.Type == "" {
		spec.Type = "api_key"
	}
	if spec.Type != "api_key" && spec.Type != "oauth" {
		v.AddAllowed("type", []any{"api_key", "oauth"}, "unknown token type %q", spec.Type)
	}
	if len(spec.Scopes) == 0 {
		v.Add("scopes", "at least one scope is needed")
	}
	checkScopes(&v, spec.Scopes)
	if err := v.Err(); err != nil {
		return Token{}, err
	}
	var out Token
	err := e.update(func(t *tx) error {
		if _, err := t.workspace(workspaceID); err != nil {
			return err
		}
		if spec.Token != "" && t.b(bTokens).Get([]byte(spec.Token)) != nil {
			return tokenTaken()
		}
		seq, err := t.b(bTokens).NextSequence()
		if err != nil {
			return err
		}
		tok := spec.Token
		if tok == "" {
			prefix := "mk_test_key"
			if spec.Type == "oauth" {
				prefix = "oat_test_token"
			}
			tok = t.freeToken(prefix, seq)
		}
		if spec.Name == "" {
			spec.Name = fmt.Sprintf("token %d", seq)
		}
		out = Token{Token: tok, WorkspaceID: workspaceID, Type: spec.Type, Name: spec.Name, Scopes: spec.Scopes, ExpiresAt: spec.ExpiresAt,
			Resources: spec.Resources}
		if err := t.putToken(out); err != nil {
			return err
		}
		t.addedTokens = append(t.addedTokens, out)
		return nil
	})
	return out, err
}

func tokenTaken() *Error {
	return &Error{Kind: ECONFLICT, Code: "token_exists", Message: "That token is already in use."}
}

func checkScopes(v *Violations, scopes []string) {
	for i, s := range scopes {
		if !slices.Contains(fixtures.Scopes, s) {
			v.AddAllowed(fmt.Sprintf("scopes[%d]", i), anySlice(fixtures.Scopes), "unknown scope %q", s)
		}
	}
}

func planIDs(w *fixtures.World) []string {
	ids := make([]string, 0, len(w.Plans))
	for id := range w.Plans {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// freeToken makes up a token that no one uses yet: its prefix, a number
// and 128 random bits (a secret is never derived from the seed: secrets.go).
func (t *tx) freeToken(prefix string, n uint64) string {
	for {
		tok := fmt.Sprintf("%s%d_%s", prefix, n, randomHex(secretBytes))
		if t.b(bTokens).Get([]byte(tok)) == nil {
			return tok
		}
	}
}

// Workspaces lists every workspace.
func (e *Engine) Workspaces() ([]Workspace, error) {
	var out []Workspace
	err := e.view(func(t *tx) error {
		return t.b(bWorkspaces).ForEach(func(_, v []byte) error {
			var w Workspace
			if err := jsonUnmarshal(v, &w); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		})
	})
	return out, err
}

// Owner is the workspace of an asset, an Encore creation or a publication
// (what is "asset", "encore" or "publication"); 0 when there is none.
func (e *Engine) Owner(what string, id uint64) (uint64, error) {
	class := map[string]string{"asset": "a", "encore": "e", "publication": "p"}[what]
	if class == "" {
		return 0, fmt.Errorf("sim: no owner of a %q", what)
	}
	var ws uint64
	err := e.view(func(t *tx) error {
		ws = t.ownerOf(class, id)
		return nil
	})
	return ws, err
}
