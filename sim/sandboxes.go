package sim

import (
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// A sandbox is a workspace made for one test suite on a shared server:
// created in one call from a fixture workspace (its plan, credits, gifts,
// keys' scopes, brand kits, projects, characters, social accounts and
// library) with keys of its own, put back to that starting state in one
// call, and deleted with every record it made. Its faults, its journal and
// its coverage are its own (the fronts keep the last two); the clock stays
// the server's one clock.

// SandboxSpec describes a sandbox to create. Zero fields take the fixture
// workspace's values.
type SandboxSpec struct {
	// Name is the workspace's name; "" gives "Sandbox N".
	Name string `json:"name,omitempty"`
	// From names the fixture workspace the sandbox starts as; "" is the
	// fixture's first (Acme Studio in the default one).
	From string `json:"from,omitempty"`
	Plan string `json:"plan,omitempty"`
	// Credits is the starting balance.
	Credits            *int `json:"credits,omitempty"`
	RateLimitPerMinute int  `json:"rate_limit_per_minute,omitempty"`
	// MonthlyGifts replaces the fixture workspace's gifts (an empty list:
	// none).
	MonthlyGifts *[]fixtures.Gift `json:"monthly_gifts,omitempty"`
	// Keys replaces the fixture workspace's keys and tokens: each gets a
	// fresh token.
	Keys []SandboxKey `json:"keys,omitempty"`
	// EmptyLibrary starts the library with no assets.
	EmptyLibrary bool `json:"empty_library,omitempty"`
}

// SandboxKey is a key of a sandbox: its name, type and scopes; its token
// is made when the sandbox is.
type SandboxKey struct {
	Name   string   `json:"name"`
	Type   string   `json:"type,omitempty"` // api_key (default) or oauth
	Scopes []string `json:"scopes"`
}

// Sandbox is a sandbox as the engine keeps it.
type Sandbox struct {
	ID          string      `json:"id"`
	Seq         uint64      `json:"seq"`
	WorkspaceID uint64      `json:"workspace_id"`
	Name        string      `json:"name"`
	From        string      `json:"from"`
	Spec        SandboxSpec `json:"spec"`
	// Tokens are its keys, in the order of the spec (or the fixture).
	Tokens []Token `json:"tokens"`
	// ControlToken reaches the control API for this sandbox alone.
	ControlToken string `json:"control_token"`
	CreatedAt    Stamp  `json:"created_at"`
	// Start are the ids its starting records were given: a reset gives
	// them the same (a sandbox of an older file has none: new ones).
	Start *StartIDs `json:"start,omitempty"`
}

// Keys are the sandbox's tokens by key name (KeyName: all_scopes, ...).
func (s Sandbox) Keys() map[string]string {
	out := make(map[string]string, len(s.Tokens))
	for _, t := range s.Tokens {
		out[KeyName(t.Name)] = t.Token
	}
	return out
}

// APIKey is the sandbox's API key with the most scopes, the one to use by
// default (its first token when it has no API key).
func (s Sandbox) APIKey() string {
	best, out := -1, ""
	for _, t := range s.Tokens {
		if t.Type == "api_key" && len(t.Scopes) > best {
			best, out = len(t.Scopes), t.Token
		}
	}
	if out == "" && len(s.Tokens) > 0 {
		out = s.Tokens[0].Token
	}
	return out
}

// DefaultMaxSandboxes is how many sandboxes may exist at once, unless the
// engine is configured otherwise.
const DefaultMaxSandboxes = 1000

var (
	bSandboxes      = []byte("sandboxes") // sandbox id -> Sandbox
	keySandboxCount = []byte("sandboxes") // in bMeta: how many exist
)

// sandboxIndex finds sandboxes without a transaction: every request asks
// whether its workspace is one.
type sandboxIndex struct {
	byID      map[string]*Sandbox
	byWS      map[uint64]*Sandbox
	byControl map[string]*Sandbox
}

func newSandboxIndex() sandboxIndex {
	return sandboxIndex{byID: map[string]*Sandbox{}, byWS: map[uint64]*Sandbox{}, byControl: map[string]*Sandbox{}}
}

func (x sandboxIndex) add(s *Sandbox) {
	x.byID[s.ID], x.byWS[s.WorkspaceID], x.byControl[s.ControlToken] = s, s, s
}

func (x sandboxIndex) remove(s *Sandbox) {
	delete(x.byID, s.ID)
	delete(x.byWS, s.WorkspaceID)
	delete(x.byControl, s.ControlToken)
}

// loadSandboxes caches the sandboxes of the state.
func (e *Engine) loadSandboxes(btx *bolt.Tx) error {
	x := newSandboxIndex()
	if b := btx.Bucket(bSandboxes); b != nil {
		err := b.ForEach(func(_, v []byte) error {
			var s Sandbox
			if err := jsonUnmarshal(v, &s); err != nil {
				return fmt.Errorf("decode sandbox: %w", err)
			}
			x.add(&s)
			return nil
		})
		if err != nil {
			return err
		}
	}
	e.mu.Lock()
	e.sandboxes = x
	e.mu.Unlock()
	return nil
}

// SandboxOf finds the sandbox a workspace is, if it is one.
func (e *Engine) SandboxOf(ws uint64) (Sandbox, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if s := e.sandboxes.byWS[ws]; s != nil {
		return *s, true
	}
	return Sandbox{}, false
}

// SandboxByControlToken finds the sandbox a control token reaches.
func (e *Engine) SandboxByControlToken(token string) (Sandbox, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if s := e.sandboxes.byControl[token]; s != nil {
		return *s, true
	}
	return Sandbox{}, false
}

// Sandbox reads a sandbox by id.
func (e *Engine) Sandbox(id string) (Sandbox, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if s := e.sandboxes.byID[id]; s != nil {
		return *s, nil
	}
	return Sandbox{}, sandboxNotFound(id)
}

// Sandboxes lists every sandbox, oldest first.
func (e *Engine) Sandboxes() []Sandbox {
	e.mu.RLock()
	out := make([]Sandbox, 0, len(e.sandboxes.byID))
	for _, s := range e.sandboxes.byID {
		out = append(out, *s)
	}
	e.mu.RUnlock()
	slices.SortFunc(out, func(a, b Sandbox) int { return int(a.Seq) - int(b.Seq) })
	return out
}

func sandboxNotFound(id string) *Error {
	return &Error{Kind: ENOTFOUND, Code: "not_found", Message: fmt.Sprintf("Sandbox %q not found.", id),
		Details: map[string]any{"resource": "sandbox", "id": id}}
}

// sandboxWorkspace resolves a spec into the fixture workspace a sandbox
// starts as, with its keys' tokens still to make; it reports every rule the
// spec breaks.
func (e *Engine) sandboxWorkspace(spec SandboxSpec) (fixtures.Workspace, []SandboxKey, error) {
	var v Violations
	var fw fixtures.Workspace
	if len(e.world.Workspaces) > 0 {
		fw = e.world.Workspaces[0]
	}
	if spec.From != "" {
		i := slices.IndexFunc(e.world.Workspaces, func(w fixtures.Workspace) bool { return strings.EqualFold(w.Name, spec.From) })
		if i < 0 {
			names := make([]any, len(e.world.Workspaces))
			for j, w := range e.world.Workspaces {
				names[j] = w.Name
			}
			v.AddAllowed("from", names, "no fixture workspace is named %q", spec.From)
		} else {
			fw = e.world.Workspaces[i]
		}
	}
	if spec.Plan != "" {
		if _, ok := e.world.Plans[spec.Plan]; !ok {
			v.AddAllowed("plan", anySlice(planIDs(e.world)), "unknown plan %q", spec.Plan)
		}
		fw.Plan = spec.Plan
	}
	if spec.Credits != nil {
		if *spec.Credits < 0 {
			v.Add("credits", "must not be negative")
		}
		fw.Credits = *spec.Credits
	}
	if spec.RateLimitPerMinute < 0 {
		v.Add("rate_limit_per_minute", "must not be negative")
	} else if spec.RateLimitPerMinute > 0 {
		fw.RateLimitPerMinute = spec.RateLimitPerMinute
	}
	if spec.MonthlyGifts != nil {
		fw.MonthlyGifts = slices.Clone(*spec.MonthlyGifts)
		for i, g := range fw.MonthlyGifts {
			if e.models[g.ModelID] == nil {
				v.Add(fmt.Sprintf("monthly_gifts[%d].model_id", i), "unknown model %q", g.ModelID)
			}
			if g.PerMonth < 1 {
				v.Add(fmt.Sprintf("monthly_gifts[%d].per_month", i), "must be at least 1")
			}
		}
	}
	keys := spec.Keys
	if keys == nil {
		for _, k := range fw.APIKeys {
			keys = append(keys, SandboxKey{Name: k.Name, Type: "api_key", Scopes: k.Scopes})
		}
		for _, k := range fw.OAuthTokens {
			keys = append(keys, SandboxKey{Name: k.Name, Type: "oauth", Scopes: k.Scopes})
		}
	}
	if len(keys) == 0 {
		v.Add("keys", "a sandbox needs at least one key")
	}
	names := map[string]bool{}
	for i, k := range keys {
		field := fmt.Sprintf("keys[%d]", i)
		switch k.Type {
		case "", "api_key", "oauth":
		default:
			v.AddAllowed(field+".type", []any{"api_key", "oauth"}, "unknown token type %q", k.Type)
		}
		if k.Name == "" {
			v.Add(field+".name", "is required")
		} else if names[KeyName(k.Name)] {
			v.Add(field+".name", "another key has the name %q", k.Name)
		}
		names[KeyName(k.Name)] = true
		if len(k.Scopes) == 0 {
			v.Add(field+".scopes", "at least one scope is needed")
		}
		for j, s := range k.Scopes {
			if !slices.Contains(fixtures.Scopes, s) {
				v.AddAllowed(fmt.Sprintf("%s.scopes[%d]", field, j), anySlice(fixtures.Scopes), "unknown scope %q", s)
			}
		}
	}
	if spec.EmptyLibrary {
		fw.Assets = fixtures.Many[fixtures.LibraryAsset]{}
	}
	fw.APIKeys, fw.OAuthTokens = nil, nil
	return fw, keys, v.Err()
}

// KeyName is how a key's name is written among a sandbox's keys: lower
// case, words joined by underscores ("all scopes" -> all_scopes).
func KeyName(name string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			under = false
			continue
		}
		under = true
	}
	return b.String()
}

// CreateSandbox creates a sandbox: a fresh workspace with keys of its own,
// started as a fixture workspace with the spec's changes. At most max
// sandboxes exist at once (0: DefaultMaxSandboxes); one more is refused with
// 409 sandbox_limit_reached. It costs the same beside 1 sandbox or 1,000.
func (e *Engine) CreateSandbox(spec SandboxSpec, max int) (Sandbox, error) {
	if max <= 0 {
		max = DefaultMaxSandboxes
	}
	fw, keys, err := e.sandboxWorkspace(spec)
	if err != nil {
		return Sandbox{}, err
	}
	// A large library is copied in batches first (sandbox_copy.go).
	lib, err := e.copyFirst(fw, max)
	if err != nil {
		return Sandbox{}, err
	}
	var out Sandbox
	err = e.update(func(t *tx) error {
		t.library = lib
		defer func() { t.library = nil }()
		// Every check comes before the first write.
		meta := t.b(bMeta)
		count := uint64(0)
		if v := meta.Get(keySandboxCount); len(v) == 8 {
			count = getU64(v)
		}
		if count >= uint64(max) {
			return &Error{Kind: ECONFLICT, Code: "sandbox_limit_reached",
				Message: fmt.Sprintf("%d sandboxes exist, the most this server keeps at once: delete one (DELETE /_mock/sandboxes/{id}) or start the server with a higher --max-sandboxes.", count),
				Details: map[string]any{"limit": max}}
		}
		b := t.b(bSandboxes)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		// The id is seeded; the control token and the keys are secrets:
		// random (secrets.go), kept in the state.
		sb := &Sandbox{Seq: seq, From: fw.Name, Spec: spec, CreatedAt: StampOf(t.now),
			ID:           fmt.Sprintf("sbx_%d_%08x", seq, DeriveSeed(e.seed, "sandbox", seq)>>32),
			ControlToken: fmt.Sprintf("sbc_%d_%s", seq, randomHex(secretBytes))}
		// The function may run again (a group that failed is retried one
		// write at a time): it works on a copy.
		fw := fw
		fw.Name = spec.Name
		if fw.Name == "" {
			fw.Name = fmt.Sprintf("Sandbox %d", seq)
		}
		sb.Name = fw.Name
		for i, k := range keys {
			typ, prefix := "api_key", "mk_sbx"
			if k.Type == "oauth" {
				typ, prefix = "oauth", "oat_sbx"
			}
			tok := t.freeToken(prefix, seq*64+uint64(i))
			sb.Tokens = append(sb.Tokens, Token{Token: tok, Type: typ, Name: k.Name, Scopes: k.Scopes})
			if typ == "oauth" {
				fw.OAuthTokens = append(fw.OAuthTokens, fixtures.Token{Name: k.Name, Token: tok, Scopes: k.Scopes})
			} else {
				fw.APIKeys = append(fw.APIKeys, fixtures.Token{Name: k.Name, Token: tok, Scopes: k.Scopes})
			}
		}
		sb.Start = &StartIDs{}
		ws, err := t.addWorkspaceWith(fw, sb.Start)
		if err != nil {
			return err
		}
		sb.WorkspaceID = ws.ID
		for i := range sb.Tokens {
			sb.Tokens[i].WorkspaceID = ws.ID
		}
		if err := putJSON(b, []byte(sb.ID), sb); err != nil {
			return err
		}
		if err := meta.Put(keySandboxCount, u64(count+1)); err != nil {
			return err
		}
		t.addedWorkspaces = append(t.addedWorkspaces, ws)
		t.addedTokens = append(t.addedTokens, sb.Tokens...)
		t.addedSandboxes = append(t.addedSandboxes, sb)
		out = *sb
		return nil
	})
	if err != nil && lib != nil {
		_ = e.dropCopy(lib.ws, e.update) // logged
	}
	return out, err
}

// DeleteSandbox deletes a sandbox: its workspace, its keys and every record
// it made (assets and their files, jobs and their events, publications,
// Encore creations, the ledger, its rate window and its faults). Its keys
// are unknown from then on.
func (e *Engine) DeleteSandbox(id string) error {
	sb, err := e.Sandbox(id)
	if err != nil {
		return err
	}
	if e.largeLibrary(sb) != nil { // in batches first (sandbox_copy.go)
		if err := e.dropLibrary(sb.WorkspaceID); err != nil {
			return err
		}
	}
	return e.update(func(t *tx) error {
		if t.b(bSandboxes).Get([]byte(id)) == nil {
			return sandboxNotFound(id) // deleted since
		}
		if err := t.clearWorkspace(sb.WorkspaceID, false); err != nil {
			return err
		}
		if err := t.b(bSandboxes).Delete([]byte(id)); err != nil {
			return err
		}
		meta := t.b(bMeta)
		if v := meta.Get(keySandboxCount); len(v) == 8 && getU64(v) > 0 {
			if err := meta.Put(keySandboxCount, u64(getU64(v)-1)); err != nil {
				return err
			}
		}
		t.removedSandboxes = append(t.removedSandboxes, &sb)
		return nil
	})
}

// ResetSandbox puts a sandbox back to its starting state: the same
// workspace and keys, the starting balance, gifts and library, and nothing
// it made since (assets, jobs, publications, ledger entries, its rate
// window and its faults). Other workspaces are not touched.
func (e *Engine) ResetSandbox(id string) (Sandbox, error) {
	sb, err := e.Sandbox(id)
	if err != nil {
		return Sandbox{}, err
	}
	fw, _, err := e.sandboxWorkspace(sb.Spec)
	if err != nil {
		return Sandbox{}, err
	}
	fw.Name = sb.Name
	// A large library goes and comes back in batches (sandbox_copy.go),
	// when it has the ids to come back with.
	lib := e.largeLibrary(sb)
	if lib != nil && (sb.Start == nil || !sb.Start.has(bAssets) || len(fw.Projects.Items) > 0 && !sb.Start.has(bProjects)) {
		lib = nil
	}
	if lib != nil {
		if err := e.dropLibrary(sb.WorkspaceID); err != nil {
			return Sandbox{}, err
		}
		fw.Assets = fixtures.Many[fixtures.LibraryAsset]{}
	}
	var created Stamp
	err = e.update(func(t *tx) error {
		if t.b(bSandboxes).Get([]byte(id)) == nil {
			return sandboxNotFound(id)
		}
		old, err := t.workspace(sb.WorkspaceID)
		if err != nil {
			return err
		}
		created = old.CreatedAt
		if err := t.clearWorkspace(sb.WorkspaceID, true); err != nil {
			return err
		}
		var ids *StartIDs
		if sb.Start != nil {
			ids = &StartIDs{First: sb.Start.First, replay: true}
		}
		_, err = t.seedWorkspace(old.ID, old.CreatedAt, fw, ids)
		t.workspacesChanged = true
		return err
	})
	if err == nil && lib != nil {
		err = e.copyAgain(id, sb.WorkspaceID, created, lib, fw.Projects.Items, sb.Start)
	}
	return sb, err
}
