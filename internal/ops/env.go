package ops

import (
	"context"
	"log/slog"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Env is what the pipeline needs of the server it runs in; the fronts'
// environment (front.Env) holds it.
type Env struct {
	Eng  *sim.Engine
	Gate *gate.Gate
	// Rules are the fault rules of every scope.
	Rules    *fault.Set
	API      *contract.Contract // openapi.json
	Coverage *journal.Counts
	Log      *slog.Logger
	// Strict validates every response of the service's operations.
	Strict bool
	// Stop ends when shutdown begins: long polls answer at once.
	Stop context.Context
	// Sleep waits wall time, for injected latency.
	Sleep func(context.Context, time.Duration)
	// MaxBodyBytes is the server's cap of a request's body.
	MaxBodyBytes int64
	// OwnFileURL recognizes the addresses of the server's own files, which
	// an image source may be (x-own-file-urls); nil recognizes none.
	OwnFileURL func(string) bool
	// Rendered keeps the JSON of final assets for list pages.
	Rendered wire.Rendered
}

// UntilStop is ctx, ended too when the server begins to shut down.
func (env *Env) UntilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(env.Stop, cancel)
	return ctx, func() { stop(); cancel() }
}

// Delay waits the latency a hit of kind latency draws (nil: none), until
// ctx ends or the server begins to stop, and returns it: every injected
// latency is applied here.
func (env *Env) Delay(ctx context.Context, h *fault.Hit) time.Duration {
	if h == nil {
		return 0
	}
	d := h.LatencyOf()
	ctx, cancel := env.UntilStop(ctx)
	env.Sleep(ctx, d)
	cancel()
	return d
}

// Faults is where a call asks which fault it meets at a stage: the edge of
// the HTTP request that carries it (its Mock-Fault header, the rules of its
// scope), or the rules alone for a call no edge carries (RuleFaults).
type Faults interface {
	// Faultable reports whether the call may meet a fault at all.
	Faultable() bool
	// PickFault decides whether the call meets a fault at stage p; the
	// hit is recorded as met.
	PickFault(p fault.Stage, req fault.Request) *fault.Hit
}

// RuleFaults are the faults of a call no HTTP edge carries (an MCP tool
// call over stdio): the rules of the caller's scope for requests of Class.
// The pipeline applies such a call's latency itself (Result.Latency); the
// edge delays every other answer.
type RuleFaults struct {
	Rules *fault.Set
	Class string
}

// Faultable reports whether any rule stands.
func (f *RuleFaults) Faultable() bool { return f.Rules.Active() }

// PickFault picks the rule of the request's workspace, or a global one,
// that strikes at p.
func (f *RuleFaults) PickFault(p fault.Stage, req fault.Request) *fault.Hit {
	req.Class = f.Class
	return f.Rules.Pick(req.Workspace, p, req)
}
