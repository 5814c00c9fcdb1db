package mediamock

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// RunT starts a server for a test: on a random loopback port, with its
// state file in t.TempDir(), in strict mode (a response that breaks
// openapi.json becomes a 500 that says why), stopped when the test ends.
// It fails the test if the server cannot start. Options may adjust the
// defaults.
func RunT(t testing.TB, opts ...func(*Options)) *Server {
	t.Helper()
	o := Options{DBPath: filepath.Join(t.TempDir(), "state.db"), Strict: true}
	for _, f := range opts {
		f(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("mediamock: cannot start the server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("mediamock: close: %v", err)
		}
	})
	return s
}

// Now is the simulated time.
func (s *Server) Now() time.Time { return s.eng.Clock().Now() }

// Advance moves the simulated clock forward by d and applies everything
// due on the way, in order.
func (s *Server) Advance(d time.Duration) time.Time {
	t, err := s.eng.Advance(d)
	if err != nil {
		panic(err) // only a negative d fails, a programming error
	}
	return t
}

// Aliases of the engine's types the Go API takes, so that tests need only
// this package.
type (
	// FailRule makes the next Count matching jobs fail.
	FailRule = sim.FailRule
	// ClockMode says how the simulated clock moves.
	ClockMode = sim.ClockMode
	// LedgerEntry is one movement of credits.
	LedgerEntry = sim.LedgerEntry
	// WorkspaceSpec describes a workspace to add.
	WorkspaceSpec = sim.WorkspaceSpec
	// TokenSpec describes a token to add.
	TokenSpec = sim.TokenSpec
)

// The clock modes.
const (
	ClockReal    = sim.ClockReal
	ClockManual  = sim.ClockManual
	ClockVirtual = sim.ClockVirtual
)

// WorkspaceID is the workspace a token belongs to.
func (s *Server) WorkspaceID(token string) (uint64, bool) {
	p, ok := s.eng.Authenticate(token)
	return p.WorkspaceID, ok
}
