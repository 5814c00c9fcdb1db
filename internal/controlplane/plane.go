// Package controlplane is the control plane of a server: what a test, an
// operator or an agent does to the simulation rather than through it. It
// keeps the faults of each scope (the server's, a workspace's, a
// sandbox's) as the control API shows and changes them, creates, deletes
// and resets sandboxes, resets and restores the whole state, counts the
// coverage, and serves every operation of control.json as a typed
// operation (Invoke): the clock, faults, jobs, workspaces, the journal,
// coverage, the client report and sandboxes, each with the rules of a
// control credential's scope.
//
// Every way in calls it: the root package's Go controls (Server, Sandbox),
// the control API (internal/control, which adds what only HTTP carries:
// snapshots, the event stream, the metrics) and the control MCP server
// (internal/mcp), whose tools are its operations:
//
//	status, body, err := plane.Invoke(ctx, &controlplane.Call{Op: "failNext",
//		Authorization: "Bearer " + token, Body: []byte(`{"count": 1}`), ContentType: "application/json"})
package controlplane

import (
	"context"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/report"
	"github.com/mediamock/mediamock/internal/store"
	"github.com/mediamock/mediamock/sim"
)

// Plane is the control plane of one server. Its engine, fault store,
// journals and coverage are the ones the edge records into.
type Plane struct {
	Eng *sim.Engine
	// Rules are the fault rules of every scope.
	Rules *fault.Set
	// Service is openapi.json: the operations a fault may target.
	Service *contract.Contract
	// Document parses control.json (once per process, on the first call
	// that needs it: the health check needs none).
	Document func() (*contract.Contract, error)
	Journal  *journal.Journal // nil when off
	// Journals are the sandboxes' own journals.
	Journals *journal.Rings
	Coverage *journal.Counts
	// Operations are the operations of openapi.json the coverage lists.
	Operations []journal.Operation
	// Start is where the clock started, for resets; zero for a real clock
	// given no start time, which a reset puts back on the wall clock.
	Start     time.Time
	WallClock func() time.Time
	// MaxSandboxes caps how many sandboxes exist at once; 0 means
	// sim.DefaultMaxSandboxes.
	MaxSandboxes int
	// ControlToken is the server's control token; "" when it has none.
	ControlToken string
	// Exposed is true when the server listens beyond loopback: without a
	// control token, reads hide every token.
	Exposed bool
	// Stop ends when shutdown begins: waits answer at once, the health
	// check says stopping.
	Stop context.Context
	// Shelf keeps the named snapshots, beside the state file.
	Shelf *store.Shelf
	// SandboxDeleted, when set, is told each sandbox deleted, by its
	// workspace, so that what a front keeps for it goes at once (the
	// authorization server's clients, codes and tokens: the router sets it
	// to oauth.Server.ForgetSandbox).
	SandboxDeleted func(workspace uint64)
}

// untilStop is ctx, ended too when the server begins to shut down.
func (p *Plane) untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.Stop, cancel)
	return ctx, func() { stop(); cancel() }
}

// FollowReports makes the client report's running aggregates
// (report.Tally) follow the server's journal and each sandbox's, from
// their first entry: a report then covers every request of its scope,
// whatever the journal's size.
func (p *Plane) FollowReports() {
	p.Journal.Follow(func() journal.Observer { return report.NewTally(p.Eng.JobOf) })
	p.Journals.Follow(func(uint64) journal.Observer { return report.NewTally(p.Eng.JobOf) })
}

// Reset puts the whole simulation back to its fixtures: state, clock,
// journals, coverage and the faults of every scope. Every sandbox goes.
func (p *Plane) Reset() error {
	start := p.Start
	if start.IsZero() {
		start = p.WallClock()
	}
	if err := p.Eng.Reset(start); err != nil {
		return err
	}
	p.Rules.ClearAll()
	p.Journal.Clear()
	p.Journals.CloseAll()
	p.ResetCoverage(0)
	if p.Shelf != nil {
		return p.Shelf.DropScope("") // the sandboxes' went with them
	}
	return nil
}

// Restored forgets what the server keeps per workspace after a snapshot
// replaced the state (its workspaces are not those they were kept for):
// the sandboxes' journals, the coverage per workspace, the fault rules per
// workspace. The faults an older snapshot kept in itself become rules.
func (p *Plane) Restored() error {
	p.Journals.CloseAll()
	report.TallyOf(p.Journal).ForgetAll()
	p.Rules.ClearScoped()
	p.Coverage.ResetScoped()
	return p.AdoptLegacyFaults()
}

// ResetCoverage starts counting coverage again: everywhere when ws is 0,
// else for one workspace.
func (p *Plane) ResetCoverage(ws uint64) {
	p.Coverage.Reset(ws)
	p.Eng.ResetLifecycle(ws)
}

// CoverageReport reports what the clients exercised, on the whole server
// when ws is 0, else in one workspace: each operation of openapi.json with
// each declared status (and any other status it answered), and each
// lifecycle path of the simulation.
func (p *Plane) CoverageReport(ws uint64) journal.Coverage {
	return p.Coverage.Report(ws, p.Operations, p.Eng.Lifecycle(ws))
}

// Ring is the journal of a scope: the server's when ws is 0, else a
// sandbox's own; nil when journals are off or ws is no sandbox.
func (p *Plane) Ring(ws uint64) *journal.Journal {
	if ws == 0 {
		return p.Journal
	}
	j, _ := p.Journals.Of(ws)
	return j
}

// CreateSandbox creates a sandbox, with a journal of its own.
func (p *Plane) CreateSandbox(spec sim.SandboxSpec) (sim.Sandbox, error) {
	sb, err := p.Eng.CreateSandbox(spec, p.MaxSandboxes)
	if err == nil {
		p.Journals.Open(sb.WorkspaceID)
	}
	return sb, err
}

// DeleteSandbox deletes a sandbox and what the server keeps of it: its
// journal, its coverage, its faults, and what the fronts keep for it
// (SandboxDeleted).
func (p *Plane) DeleteSandbox(id string) error {
	sb, err := p.Eng.Sandbox(id)
	if err != nil {
		return err
	}
	if err := p.Eng.DeleteSandbox(id); err != nil {
		return err
	}
	p.forget(sb.WorkspaceID)
	p.Journals.Close(sb.WorkspaceID)
	p.sandboxDeleted(sb.WorkspaceID)
	if p.Shelf != nil {
		return p.Shelf.DropScope(sb.ID) // its named snapshots go with it
	}
	return nil
}

// ResetSandbox puts a sandbox back to its starting state, with an empty
// journal, no coverage and no faults.
func (p *Plane) ResetSandbox(id string) (sim.Sandbox, error) {
	sb, err := p.Eng.ResetSandbox(id)
	if err != nil {
		return sb, err
	}
	p.forget(sb.WorkspaceID)
	p.Journals.Open(sb.WorkspaceID)
	return sb, nil
}

// sandboxDeleted tells SandboxDeleted, when set, of a sandbox deleted.
func (p *Plane) sandboxDeleted(ws uint64) {
	if p.SandboxDeleted != nil {
		p.SandboxDeleted(ws)
	}
}

// forget drops what the server keeps of a workspace: its faults, its
// coverage, what the server's client report keeps of it.
func (p *Plane) forget(ws uint64) {
	p.Rules.Clear(ws)
	p.ResetCoverage(ws)
	report.TallyOf(p.Journal).Forget(ws)
}
