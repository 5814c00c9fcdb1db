package mediamock

import (
	"io"
	"time"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// This file is the Go side of the controls: what the control API does over
// HTTP, a test does here directly.

// Aliases of the types the Go API takes and returns, so that tests need
// only this package.
type (
	// ClockMode says how the simulated clock moves.
	ClockMode = sim.ClockMode
	// LedgerEntry is one movement of credits.
	LedgerEntry = sim.LedgerEntry
	// WorkspaceSpec describes a workspace to add.
	WorkspaceSpec = sim.WorkspaceSpec
	// NewWorkspace is a workspace added at run time and its first API key.
	NewWorkspace = sim.NewWorkspace
	// TokenSpec describes a token to add.
	TokenSpec = sim.TokenSpec
	// Token is an API key or OAuth access token.
	Token = sim.Token
)

// The clock modes.
const (
	ClockReal    = sim.ClockReal
	ClockManual  = sim.ClockManual
	ClockVirtual = sim.ClockVirtual
)

// Engine is the simulation behind the server, for experts: everything a
// test needs has a method of Server.
func (s *Server) Engine() *sim.Engine { return s.eng }

// --- clock

// Now is the simulated time.
func (s *Server) Now() time.Time { return s.eng.Clock().Now() }

// Advance moves the simulated clock forward by d and applies everything
// due on the way, in order. A negative d is an error.
func (s *Server) Advance(d time.Duration) error {
	_, err := s.eng.Advance(d)
	return err
}

// RunUntilIdle moves the clock from one due event to the next (jobs moving,
// publications delivering) until nothing is due within limit of the time it
// started from, and returns how far the clock moved. A stuck job is never
// due; a publication scheduled beyond the limit is left for later. Tests
// use it instead of guessing how long a video takes.
func (s *Server) RunUntilIdle(limit time.Duration) (time.Duration, error) {
	start := s.Now()
	for {
		next, ok, _ := s.eng.NextDue()
		if !ok || next.Sub(start) > limit {
			return s.Now().Sub(start), nil
		}
		if next.After(s.Now()) {
			if err := s.eng.SetTime(next); err != nil {
				return s.Now().Sub(start), err
			}
		} else if err := s.eng.Settle(); err != nil {
			return s.Now().Sub(start), err
		}
	}
}

// SetTime moves the simulated clock to t (never backwards) and applies
// everything due on the way.
func (s *Server) SetTime(t time.Time) error { return s.eng.SetTime(t) }

// SetClockMode switches the clock between real, manual and virtual.
func (s *Server) SetClockMode(m ClockMode) error { return s.eng.SetClockMode(m) }

// ResyncClock puts a real clock back on the wall clock, dropping the
// offset that advances and sets added (the clock may move backwards by
// it; nothing is lost). Only in real mode.
func (s *Server) ResyncClock() error {
	_, err := s.eng.ResyncClock()
	return err
}

// --- jobs

// FailAsset fails the generation of an asset now, refunding its credits.
func (s *Server) FailAsset(id uint64, code string) error {
	_, err := s.eng.ControlAsset(id, sim.JobFail, code)
	return err
}

// StickAsset makes the generation of an asset never move again.
func (s *Server) StickAsset(id uint64) error {
	_, err := s.eng.ControlAsset(id, sim.JobStick, "")
	return err
}

// CompleteAsset completes the generation of an asset now.
func (s *Server) CompleteAsset(id uint64) error {
	_, err := s.eng.ControlAsset(id, sim.JobComplete, "")
	return err
}

// FailEncore fails an Encore creation now, refunding its credits.
func (s *Server) FailEncore(id uint64, code string) error {
	_, err := s.eng.ControlEncore(id, sim.JobFail, code)
	return err
}

// StickEncore makes an Encore creation never move again.
func (s *Server) StickEncore(id uint64) error {
	_, err := s.eng.ControlEncore(id, sim.JobStick, "")
	return err
}

// CancelPublication cancels what a publication has not delivered yet.
func (s *Server) CancelPublication(id uint64) error {
	_, err := s.eng.CancelPublicationAny(id)
	return err
}

// Asset reads an asset of any workspace.
// Its URL and DownloadURL are built from the public URL, or else from the
// server's own address.
func (s *Server) Asset(id uint64) (Asset, error) {
	a, err := s.eng.AssetByID(id)
	if err != nil {
		return Asset{}, err
	}
	return assetOf(s.view(), a), nil
}

// view renders records with the server's public address, or else its own.
func (s *Server) view() wire.View {
	base := s.opts.PublicURL
	if base == "" {
		base = s.url
	}
	return wire.View{Base: base, Eng: s.eng}
}

// --- workspaces and credits

// WorkspaceID is the workspace a token belongs to.
func (s *Server) WorkspaceID(token string) (uint64, bool) {
	p, ok := s.eng.Authenticate(token)
	return p.WorkspaceID, ok
}

// AddWorkspace creates a workspace with credits and an API key.
func (s *Server) AddWorkspace(spec WorkspaceSpec) (NewWorkspace, error) {
	return s.eng.AddWorkspace(spec)
}

// AddToken adds an API key or access token to a workspace.
func (s *Server) AddToken(workspaceID uint64, spec TokenSpec) (Token, error) {
	return s.eng.AddToken(workspaceID, spec)
}

// Balance is a workspace's credit balance.
func (s *Server) Balance(workspaceID uint64) (int64, error) { return s.eng.Balance(workspaceID) }

// GrantCredits adds credits to a workspace (negative: removes them).
func (s *Server) GrantCredits(workspaceID uint64, amount int64) (int64, error) {
	return s.eng.GrantCredits(workspaceID, amount, "")
}

// Ledger is a workspace's credit ledger, oldest first.
func (s *Server) Ledger(workspaceID uint64) ([]LedgerEntry, error) { return s.eng.Ledger(workspaceID) }

// --- journal, coverage, state

// Snapshot writes the whole state (a bbolt file) to w, consistent as of one
// moment, and returns how many bytes it wrote.
func (s *Server) Snapshot(w io.Writer) (int64, error) { return s.eng.Snapshot(w) }

// Restore replaces the whole state with a snapshot read from r. The
// snapshot is checked completely before anything is replaced: a damaged one
// is refused and the state is left as it was.
func (s *Server) Restore(r io.Reader) error {
	return s.plane.RestoreState(r)
}

// Reset puts the whole simulation back to its fixtures: state, clock,
// journals, coverage and faults. Every sandbox goes.
func (s *Server) Reset() error { return s.plane.Reset() }
