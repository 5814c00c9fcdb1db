package sim

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Principal is who a request is made for: a workspace, through one token.
type Principal struct {
	WorkspaceID uint64
	TokenType   string // api_key or oauth
	TokenName   string
	Scopes      []string
	// Resources are the protected resources the token was issued for
	// ("/mcp", "/api/v1"); empty: every one.
	Resources []string
}

// HasScope reports whether the token grants scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Reaches reports whether the token may be used at a protected resource
// ("/mcp", "/api/v1"): one issued for no resource in particular reaches
// every one; "" asks nothing.
func (p Principal) Reaches(resource string) bool {
	return resource == "" || len(p.Resources) == 0 || slices.Contains(p.Resources, resource)
}

// Authenticate resolves a bearer token to its principal.
func (e *Engine) Authenticate(token string) (Principal, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t, ok := e.tokens[token]
	if !ok || (t.ExpiresAt != 0 && e.clock.Now().Unix() >= t.ExpiresAt) {
		return Principal{}, false
	}
	return Principal{WorkspaceID: t.WorkspaceID, TokenType: t.Type, TokenName: t.Name, Scopes: t.Scopes, Resources: t.Resources}, true
}

// loadPrincipals caches tokens and workspace limits, which every request reads.
func (e *Engine) loadPrincipals(btx *bolt.Tx) error {
	tokens, byWS := map[string]Token{}, map[uint64][]string{}
	err := btx.Bucket(bTokens).ForEach(func(k, v []byte) error {
		var t Token
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode token: %w", err)
		}
		tokens[t.Token] = t
		byWS[t.WorkspaceID] = append(byWS[t.WorkspaceID], t.Token)
		return nil
	})
	if err != nil {
		return err
	}
	workspaces := map[uint64]*Workspace{}
	err = btx.Bucket(bWorkspaces).ForEach(func(k, v []byte) error {
		var w Workspace
		if err := json.Unmarshal(v, &w); err != nil {
			return fmt.Errorf("decode workspace: %w", err)
		}
		workspaces[w.ID] = &Workspace{ID: w.ID, Name: w.Name, Plan: w.Plan, RateLimit: w.RateLimit, PublishingAllowed: w.PublishingAllowed}
		return nil
	})
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.tokens, e.tokensByWS, e.workspaces = tokens, byWS, workspaces
	e.mu.Unlock()
	return e.loadSandboxes(btx)
}

func (t *tx) workspace(id uint64) (*Workspace, error) {
	// A group of writes reads the same workspace again and again (each
	// creation of a busy workspace): it is decoded once per transaction.
	// The caller gets a copy of its own: a write that changes it and then
	// fails without putting it back leaves nothing behind.
	if w, ok := t.workspaces[id]; ok {
		return w.clone(), nil
	}
	var w Workspace
	ok, err := getJSON(t.b(bWorkspaces), u64(id), &w)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("workspace", id)
	}
	t.keepWorkspace(&w)
	return &w, nil
}

func (t *tx) putWorkspace(w *Workspace) error {
	if t.deferWorkspaces {
		// A group of writes puts the same workspace again and again (each
		// creation charges it): it is kept decoded, and encoded and written
		// once, when the group finishes (flushWorkspaces).
		if !slices.Contains(t.dirtyWorkspaces, w.ID) {
			t.dirtyWorkspaces = append(t.dirtyWorkspaces, w.ID)
		}
		t.keepWorkspace(w)
		return nil
	}
	if err := putJSON(t.b(bWorkspaces), u64(w.ID), w); err != nil {
		delete(t.workspaces, w.ID)
		return err
	}
	t.keepWorkspace(w)
	return nil
}

// flushWorkspaces writes the workspaces put since the group began, each
// once, in the order they were first put.
func (t *tx) flushWorkspaces() error {
	for _, id := range t.dirtyWorkspaces {
		w, ok := t.workspaces[id]
		if !ok {
			continue // deleted since
		}
		if err := putJSON(t.b(bWorkspaces), u64(id), w); err != nil {
			return err
		}
	}
	t.dirtyWorkspaces = t.dirtyWorkspaces[:0]
	return nil
}

// keepWorkspace remembers a copy of a workspace as the state holds it.
func (t *tx) keepWorkspace(w *Workspace) {
	if t.workspaces == nil {
		t.workspaces = map[uint64]*Workspace{}
	}
	t.workspaces[w.ID] = w.clone()
}

// deleteWorkspace removes a workspace's record.
func (t *tx) deleteWorkspace(id uint64) error {
	delete(t.workspaces, id)
	t.dirtyWorkspaces = slices.DeleteFunc(t.dirtyWorkspaces, func(d uint64) bool { return d == id })
	return t.b(bWorkspaces).Delete(u64(id))
}

func (w *Workspace) clone() *Workspace {
	c := *w
	c.Gifts = slices.Clone(w.Gifts)
	return &c
}

// RevokeToken removes a token: it authenticates nothing from then on. It
// reports whether the token existed.
func (e *Engine) RevokeToken(token string) (bool, error) {
	found := false
	err := e.update(func(t *tx) error {
		if t.b(bTokens).Get([]byte(token)) == nil {
			return nil
		}
		found = true
		t.reloadPrincipals = true
		return t.b(bTokens).Delete([]byte(token))
	})
	return found, err
}

// PurgeAllExpiredTokens removes every token whose time has passed on the
// simulated clock (on every clock mode: the authorization server calls it
// at each of its requests). It costs a scan of the tokens held in memory,
// and a write only when one has expired.
func (e *Engine) PurgeAllExpiredTokens() (int, error) {
	return e.purgeExpired(func(yield func(string) bool) {
		for tok := range e.tokens {
			if !yield(tok) {
				return
			}
		}
	})
}

// PurgeExpiredTokens removes the workspace's tokens whose time has passed
// (issued access tokens), so that they do not pile up in the state file;
// it reports how many.
func (e *Engine) PurgeExpiredTokens(workspaceID uint64) (int, error) {
	return e.purgeExpired(func(yield func(string) bool) {
		for _, tok := range e.tokensByWS[workspaceID] {
			if !yield(tok) {
				return
			}
		}
	})
}

// purgeExpired removes the expired tokens among those tokens yields (read
// under e.mu).
func (e *Engine) purgeExpired(tokens iter.Seq[string]) (int, error) {
	now := e.clock.Now().Unix()
	var expired []string
	e.mu.RLock()
	for tok := range tokens {
		if t := e.tokens[tok]; t.ExpiresAt != 0 && now >= t.ExpiresAt {
			expired = append(expired, tok)
		}
	}
	e.mu.RUnlock()
	if len(expired) == 0 {
		return 0, nil
	}
	err := e.update(func(t *tx) error {
		t.reloadPrincipals = true
		for _, tok := range expired {
			if err := t.b(bTokens).Delete([]byte(tok)); err != nil {
				return err
			}
		}
		return nil
	})
	return len(expired), err
}
