package mediamock

import (
	"time"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

// SandboxSpec describes a sandbox to create: a fresh workspace that starts
// as a fixture workspace (its plan, credits, gifts, keys' scopes, brand
// kits, projects, characters, social accounts and library), with the
// changes set here. The zero value starts as the fixture's first workspace
// (Acme Studio in the embedded default).
type SandboxSpec struct {
	// Name is the workspace's name; "" gives "Sandbox N".
	Name string `json:"name,omitempty"`
	// From names the fixture workspace to start as.
	From string `json:"from,omitempty"`
	// Plan replaces the workspace's plan: free, creator, pro, business.
	Plan string `json:"plan,omitempty"`
	// Credits, when set, is the starting balance.
	Credits *int `json:"credits,omitempty"`
	// RateLimitPerMinute, when positive, replaces the plan's rate limit.
	RateLimitPerMinute int `json:"rate_limit_per_minute,omitempty"`
	// MonthlyGifts, when set, replaces the gifts (an empty list: none).
	MonthlyGifts *[]Gift `json:"monthly_gifts,omitempty"`
	// Keys, when set, replaces the keys: each gets a fresh token.
	Keys []SandboxKey `json:"keys,omitempty"`
	// EmptyLibrary starts the library with no assets.
	EmptyLibrary bool `json:"empty_library,omitempty"`
}

// Gift is a number of free generations per calendar month of one model.
type Gift struct {
	ModelID  string `json:"model_id"`
	PerMonth int    `json:"per_month"`
}

// SandboxKey is a key of a sandbox to create: its token is made with it.
type SandboxKey struct {
	Name string `json:"name"`
	// Type is api_key (the default) or oauth.
	Type   string   `json:"type,omitempty"`
	Scopes []string `json:"scopes"`
}

func (spec SandboxSpec) sim() sim.SandboxSpec {
	out := sim.SandboxSpec{Name: spec.Name, From: spec.From, Plan: spec.Plan, Credits: spec.Credits,
		RateLimitPerMinute: spec.RateLimitPerMinute, EmptyLibrary: spec.EmptyLibrary}
	if spec.MonthlyGifts != nil {
		gifts := make([]fixtures.Gift, len(*spec.MonthlyGifts))
		for i, g := range *spec.MonthlyGifts {
			gifts[i] = fixtures.Gift(g)
		}
		out.MonthlyGifts = &gifts
	}
	for _, k := range spec.Keys {
		out.Keys = append(out.Keys, sim.SandboxKey(k))
	}
	return out
}

// Sandbox is a sandbox of a shared server: a workspace of its own, with its
// own keys, and Controls (faults, journal, coverage) that touch it alone.
// Many test suites, in any language, can run in parallel on one server,
// each in its own sandbox. The clock stays the server's: RunUntilIdle
// finishes the sandbox's own work without moving it.
type Sandbox struct {
	Controls
	srv *Server
	// ID names the sandbox in the control API (sbx_1_4f0c9a2e).
	ID          string
	Name        string
	WorkspaceID uint64
	// Keys are its keys by name (all_scopes, read_only, ...); APIKey is the
	// API key with the most scopes, the one to use by default.
	Keys   map[string]string
	APIKey string
	// ControlToken reaches the control API for this sandbox alone.
	ControlToken string
}

// NewSandbox creates a sandbox; Delete removes it.
func (s *Server) NewSandbox(spec SandboxSpec) (*Sandbox, error) {
	sb, err := s.plane.CreateSandbox(spec.sim())
	if err != nil {
		return nil, err
	}
	out := &Sandbox{Controls: Controls{plane: s.plane, ws: sb.WorkspaceID, url: s.URL}, srv: s, ID: sb.ID, Name: sb.Name,
		WorkspaceID: sb.WorkspaceID, Keys: sb.Keys(), APIKey: sb.APIKey(), ControlToken: sb.ControlToken}
	return out, nil
}

// Sandbox creates a sandbox for a test, deleted when the test ends; it
// fails the test if the sandbox cannot be made. Options adjust the spec:
//
//	sb := srv.Sandbox(t, func(s *mediamock.SandboxSpec) { s.From = "Pixel Garage" })
func (s *Server) Sandbox(t TB, opts ...func(*SandboxSpec)) *Sandbox {
	t.Helper()
	var spec SandboxSpec
	for _, f := range opts {
		f(&spec)
	}
	sb, err := s.NewSandbox(spec)
	if err != nil {
		t.Fatalf("mediamock: cannot create a sandbox: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Delete(); err != nil && !sim.IsKind(err, sim.EUNAVAILABLE) {
			t.Errorf("mediamock: delete sandbox %s: %v", sb.ID, err)
		}
	})
	return sb
}

// BaseURL is the service's base address, as for the server.
func (sb *Sandbox) BaseURL() string { return sb.srv.BaseURL() }

// Delete removes the sandbox and every record it made; its keys are unknown
// from then on. Deleting it twice is not an error.
func (sb *Sandbox) Delete() error {
	err := sb.srv.plane.DeleteSandbox(sb.ID)
	if sim.IsKind(err, sim.ENOTFOUND) {
		return nil
	}
	return err
}

// Reset puts the sandbox back to its starting state: the same keys, the
// starting balance and library, no records of its own since, and no
// faults, journal or coverage. Nothing else on the server changes.
func (sb *Sandbox) Reset() error {
	_, err := sb.srv.plane.ResetSandbox(sb.ID)
	return err
}

// RunUntilIdle finishes the sandbox's own work now, without moving the
// shared clock: every event of its jobs and publications due within limit
// from now is applied at the current time, in order, and then those they
// schedule, until none is. A stuck job never moves. It returns how many
// events it applied.
func (sb *Sandbox) RunUntilIdle(limit time.Duration) (int, error) {
	return sb.srv.eng.RunSandbox(sb.ID, limit)
}

// Balance is the sandbox's credit balance.
func (sb *Sandbox) Balance() (int64, error) { return sb.srv.eng.Balance(sb.WorkspaceID) }

// Ledger is the sandbox's credit ledger, oldest first.
func (sb *Sandbox) Ledger() ([]LedgerEntry, error) { return sb.srv.eng.Ledger(sb.WorkspaceID) }
