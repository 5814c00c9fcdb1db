// Package front holds what every HTTP front of a server shares: the
// environment (engine, gate, contracts, journal, coverage), the edge every
// request passes (request id, body cap, panic recovery, journal, strict
// response checks) and the helpers that write the spec's JSON and errors.
package front

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/metrics"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Env is what the fronts of one server share.
type Env struct {
	Eng  *sim.Engine
	Gate *gate.Gate
	// Rules are the fault rules of every scope.
	Rules    *fault.Set
	API      *contract.Contract // openapi.json
	Journal  *journal.Journal   // nil when off
	Coverage *journal.Counts
	// Metrics count every request that passed the edge; nil counts none.
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// WallClock reads wall time, for latencies and journal times.
	WallClock func() time.Time
	// Stop ends when shutdown begins: long polls answer at once.
	Stop context.Context
	// Sleep waits wall time, for injected latency.
	Sleep func(context.Context, time.Duration)
	// PublicURL is the base of the addresses handed out; "" uses the
	// address the client reached the server with when its Host is a name
	// the server answers to (named), else ListenURL.
	PublicURL string
	ListenURL string
	// AllowedHosts are host names, besides loopback ones, that may reach
	// the control API and appear in the addresses handed out.
	AllowedHosts []string
	// Exposed is true when the listener is not on a loopback address.
	Exposed      bool
	MaxBodyBytes int64
	tooLarge     sync.Once
	tooLargeErr  error
	// Strict validates every response of the service's operations.
	Strict bool
	// Evolve is the standing evolve mode (--evolve): every answer of the
	// service's operations evolves, whatever the fault rules, unless a
	// rule or a Mock-Fault header of kind evolve gives its own parameters.
	Evolve       bool
	ControlToken string
	// Start is where the clock started, for resets; zero for a real clock
	// given no start time, which a reset puts back on the wall clock.
	Start time.Time
	// Operations are the operations of openapi.json the coverage lists.
	Operations []journal.Operation

	// Journals are the sandboxes' own journals.
	Journals *journal.Rings
	// MaxSandboxes caps how many sandboxes exist at once; 0 means
	// sim.DefaultMaxSandboxes.
	MaxSandboxes int
	// MaxMCPSessions and MaxMCPWorkspaceSessions cap the MCP sessions of
	// the server and of one workspace; 0 means the MCP front's defaults.
	MaxMCPSessions, MaxMCPWorkspaceSessions int
	// MCPMaxWait caps the wait_seconds of MCP tool calls; 0: none.
	MCPMaxWait int

	// Parking, when set, takes waiting long polls off net/http: their
	// connections wait without a goroutine of net/http's, and go back to
	// it once answered (see Writer.Park). Nil: they wait where they are.
	Parking *Parking

	// Rendered keeps the JSON of final assets for list pages.
	Rendered wire.Rendered

	reqSeq atomic.Uint64
}

// UntilStop is ctx, ended too when the server begins to shut down.
func (env *Env) UntilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(env.Stop, cancel)
	return ctx, func() { stop(); cancel() }
}

// View renders engine records for a request: links are built from the
// public URL, or from the scheme and host the client used when that host is
// a name the server answers to (named), or from the listen address: a
// client's Host header is never reflected into addresses as it is.
func (env *Env) View(r *http.Request) wire.View {
	v := env.listenView()
	switch {
	case env.PublicURL != "":
		v.Base = env.PublicURL
	case env.named(hostname(r.Host)):
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		v.Base = scheme + "://" + r.Host
	}
	if env.Rules.HasStage(fault.Access) {
		v.Sign = env.signFile
	}
	return v
}

// Reset puts the whole simulation back to its fixtures: state, clock,
// journals, coverage and the faults of every scope. Every sandbox goes.
func (env *Env) Reset() error {
	start := env.Start
	if start.IsZero() {
		start = env.WallClock()
	}
	if err := env.Eng.Reset(start); err != nil {
		return err
	}
	env.Rules.ClearAll()
	env.Journal.Clear()
	env.Journals.CloseAll()
	env.ResetCoverage(0)
	return nil
}

// Restored forgets what the fronts keep per workspace after a snapshot
// replaced the state (its workspaces are not those they were kept for):
// the sandboxes' journals, the coverage per workspace, the fault rules per
// workspace. The faults an older snapshot kept in itself become rules.
func (env *Env) Restored() error {
	env.Journals.CloseAll()
	env.Rules.ClearScoped()
	env.Coverage.ResetScoped()
	return env.AdoptLegacyFaults()
}

// ResetCoverage starts counting coverage again: everywhere when ws is 0,
// else for one workspace.
func (env *Env) ResetCoverage(ws uint64) {
	env.Coverage.Reset(ws)
	env.Eng.ResetLifecycle(ws)
}

// CoverageReport reports what the clients exercised, on the whole server
// when ws is 0, else in one workspace: each operation of openapi.json with
// each declared status (and any other status it answered), and each
// lifecycle path of the simulation.
func (env *Env) CoverageReport(ws uint64) journal.Coverage {
	return env.Coverage.Report(ws, env.Operations, env.Eng.Lifecycle(ws))
}

// CreateSandbox creates a sandbox, with a journal of its own.
func (env *Env) CreateSandbox(spec sim.SandboxSpec) (sim.Sandbox, error) {
	sb, err := env.Eng.CreateSandbox(spec, env.MaxSandboxes)
	if err == nil {
		env.Journals.Open(sb.WorkspaceID)
	}
	return sb, err
}

// DeleteSandbox deletes a sandbox and what the fronts keep of it: its
// journal, its coverage, its faults.
func (env *Env) DeleteSandbox(id string) error {
	sb, err := env.Eng.Sandbox(id)
	if err != nil {
		return err
	}
	if err := env.Eng.DeleteSandbox(id); err != nil {
		return err
	}
	env.forget(sb.WorkspaceID)
	env.Journals.Close(sb.WorkspaceID)
	return nil
}

// ResetSandbox puts a sandbox back to its starting state, with an empty
// journal, no coverage and no faults.
func (env *Env) ResetSandbox(id string) (sim.Sandbox, error) {
	sb, err := env.Eng.ResetSandbox(id)
	if err != nil {
		return sb, err
	}
	env.forget(sb.WorkspaceID)
	env.Journals.Open(sb.WorkspaceID)
	return sb, nil
}

// forget drops what the fronts keep of a workspace.
func (env *Env) forget(ws uint64) {
	env.Rules.Clear(ws)
	env.ResetCoverage(ws)
}

// BodyCap is the server's cap of a request's body (--max-body-bytes) and
// the error of a body over it, 413 payload_too_large, made once: errors
// are values no one changes. It fits Door.BodyLimit.
func (env *Env) BodyCap(*http.Request) (int64, error) {
	env.tooLarge.Do(func() { env.tooLargeErr = problem.TooLarge(env.MaxBodyBytes) })
	return env.MaxBodyBytes, env.tooLargeErr
}
