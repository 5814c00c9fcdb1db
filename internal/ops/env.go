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

// Env is what the pipeline needs of the server it runs in: the fronts that
// call it (REST, MCP) are given it beside the edge's environment, which it
// does not know.
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
	// Delay waits the latency a latency fault's hit draws (nil: none) and
	// returns it: the edge's, the one place a latency is applied. The
	// pipeline applies it to a call no edge carries (RuleFaults).
	Delay func(context.Context, *fault.Hit) time.Duration
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

// Admission is where a call asks for the admission faults it meets: the
// edge's writer of the HTTP request that carries it (its Mock-Fault
// header, the rules of its scope), or the rules alone for a call no edge
// carries (RuleFaults).
type Admission interface {
	// Faultable reports whether the call may meet a fault at all.
	Faultable() bool
	// Admission is the status fault that answers instead of the
	// operation, or nil; the hit is recorded as met.
	Admission(fault.Request) *fault.Hit
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

// Admission picks the status rule of the request's workspace, or a global
// one, that strikes the call.
func (f *RuleFaults) Admission(req fault.Request) *fault.Hit { return f.pick(fault.Admit, req) }

// latency picks the latency rule that strikes a call of op by workspace ws.
func (f *RuleFaults) latency(op string, ws uint64) *fault.Hit {
	return f.pick(fault.Delay, fault.Request{Operation: op, Workspace: ws})
}

func (f *RuleFaults) pick(p fault.Stage, req fault.Request) *fault.Hit {
	req.Class = f.Class
	return f.Rules.Pick(req.Workspace, p, req)
}
