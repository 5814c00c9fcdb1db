// Package front holds what every HTTP front of a server shares: the
// environment (engine, gate, contracts, journal, coverage), the edge every
// request passes (request id, body cap, panic recovery, journal, strict
// response checks) and the helpers that write the spec's JSON and errors.
package front

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Env is what the fronts of one server share.
type Env struct {
	Eng      *sim.Engine
	Gate     *gate.Gate
	API      *contract.Contract // openapi.json
	Journal  *journal.Journal   // nil when off
	Coverage *journal.Counts
	Log      *slog.Logger
	// WallClock reads wall time, for latencies and journal times.
	WallClock func() time.Time
	// Stop ends when shutdown begins: long polls answer at once.
	Stop context.Context
	// Sleep waits wall time, for injected latency.
	Sleep func(context.Context, time.Duration)
	// PublicURL is the base of the addresses handed out; "" uses the
	// address the client reached the server with when its Host is allowed
	// (HostAllowed), else ListenURL.
	PublicURL string
	ListenURL string
	// AllowedHosts are host names, besides loopback ones, that may reach
	// the control API and appear in the addresses handed out.
	AllowedHosts []string
	// Exposed is true when the listener is not on a loopback address.
	Exposed      bool
	MaxBodyBytes int64
	// Strict validates every response of the service's operations.
	Strict       bool
	ControlToken string
	// Start is where the clock started, for resets.
	Start time.Time
	// Operations are the operations of openapi.json the coverage lists.
	Operations []journal.Operation

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
	if env.PublicURL != "" {
		return wire.View{Base: env.PublicURL, Eng: env.Eng}
	}
	if !env.named(hostname(r.Host)) {
		return env.listenView()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return wire.View{Base: scheme + "://" + r.Host, Eng: env.Eng}
}

// Reset puts the whole simulation back to its fixtures: state, clock,
// journal, coverage and faults.
func (env *Env) Reset() error {
	if err := env.Eng.Reset(env.Start); err != nil {
		return err
	}
	env.Gate.Clear()
	env.Journal.Clear()
	env.ResetCoverage()
	return nil
}

// ResetCoverage starts counting coverage again.
func (env *Env) ResetCoverage() {
	env.Coverage.Reset()
	env.Eng.ResetLifecycle()
}

// CoverageReport reports what the clients exercised: each operation of
// openapi.json with each declared status (and any other status it
// answered), and each lifecycle path of the simulation.
func (env *Env) CoverageReport() journal.Coverage {
	return env.Coverage.Report(env.Operations, env.Eng.Lifecycle())
}

// ClearFaults removes every injected fault, in the engine and in the gate.
func (env *Env) ClearFaults() error {
	env.Gate.Clear()
	return env.Eng.ClearFaults()
}

// Faults is every injected fault: the engine's and the gate's.
type Faults struct {
	sim.FaultsView
	LatencyMS map[string]int64      `json:"latency_ms"`
	Forced    []gate.ForcedResponse `json:"forced_responses"`
}

// Faults returns every injected fault.
func (env *Env) Faults() (Faults, error) {
	v, err := env.Eng.Faults()
	if err != nil {
		return Faults{}, err
	}
	if v.FailNext == nil {
		v.FailNext = []sim.FailRule{}
	}
	if v.FailPlatforms == nil {
		v.FailPlatforms = []string{}
	}
	out := Faults{FaultsView: v}
	out.LatencyMS, out.Forced = env.Gate.Faults()
	return out, nil
}

// ForceResponses answers the next count requests of an operation of
// openapi.json ("*" for any) with status 500, 503 or 429.
func (env *Env) ForceResponses(operation string, status, count int) error {
	return env.Gate.Force(operation, status, count, env.API.Has)
}
