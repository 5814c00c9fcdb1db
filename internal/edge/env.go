// Package edge is what every request to a server passes, whatever front
// serves it (Env.Serve): a request id and a Date from the simulated clock,
// the body cap, panic recovery, the capture of its bodies, the faults it
// meets (which ones, and latency: faults.go; the held answer evolved and
// delivered broken: delivery.go), and afterwards the exchange's journal
// entry, log line and metrics. It also holds the one host and origin guard
// (hosts.go), the file addresses' signatures and the access stage of their
// downloads (files.go), and the writers of the spec's JSON and errors.
//
// A front serves a request through a Writer, and hands the edge the
// request's outcome once it knows it (Writer.Hand): who made it, which
// operation it was and how that answered, the MCP message and the tool
// call it carried, the file it was for. The fault stages a front meets
// are the Writer's too, one method each (Admission, SessionFault,
// CallFault, FileAccess). What a test or an operator does to the
// simulation is the control plane's (internal/controlplane), not the
// edge's.
package edge

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
	"github.com/mediamock/mediamock/internal/parking"
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
	Evolve bool
	// ControlToken closes the test controls: a Mock-Fault header is
	// ignored when it is set.
	ControlToken string

	// Journals are the sandboxes' own journals.
	Journals *journal.Rings
	// MaxMCPSessions and MaxMCPWorkspaceSessions cap the MCP sessions of
	// the server and of one workspace; 0 means the MCP front's defaults.
	MaxMCPSessions, MaxMCPWorkspaceSessions int
	// MCPMaxWait caps the wait_seconds of MCP tool calls; 0: none.
	MCPMaxWait int

	// Parking, when set, takes waiting long polls off net/http: their
	// connections wait without a goroutine of net/http's, and go back to
	// it once answered (see Writer.Park). Nil: they wait where they are.
	Parking *parking.Listener

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
func (env *Env) View(r *http.Request) wire.View { return env.ViewOf(r.Host, r.TLS != nil) }

// ViewOf is the view of a request sent to host (a Host header), over TLS
// or not.
func (env *Env) ViewOf(host string, tls bool) wire.View {
	v := env.listenView()
	switch {
	case env.PublicURL != "":
		v.Base = env.PublicURL
	case env.named(hostname(host)):
		scheme := "http"
		if tls {
			scheme = "https"
		}
		v.Base = scheme + "://" + host
	}
	if env.Rules.HasStage(fault.Access) {
		v.Sign = env.signFile
	}
	return v
}

// BodyCap is the server's cap of a request's body (--max-body-bytes) and
// the error of a body over it, 413 payload_too_large, made once: errors
// are values no one changes. It fits Door.BodyLimit.
func (env *Env) BodyCap(*http.Request) (int64, error) {
	env.tooLarge.Do(func() { env.tooLargeErr = problem.TooLarge(env.MaxBodyBytes) })
	return env.MaxBodyBytes, env.tooLargeErr
}
