package edge

import (
	"net/http"
	"runtime/debug"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// InProcess is an exchange without an HTTP request of its own, served in
// process inside one that passed the edge: a call of the control MCP
// server is a control request of its own. It is given what the edge gives
// every request it serves, a request id, panic recovery, the log lines and
// the count in the metrics, but no journal entry (the doors of the control
// plane journal none), no fault and no connection.
type InProcess struct {
	env          *Env
	front        string
	method, path string
	id           string
	started      time.Time
}

// InProcess starts an exchange of front without an HTTP request of its
// own; method and path name it in the log lines (the operation's, as its
// HTTP front serves it).
func (env *Env) InProcess(front, method, path string) *InProcess {
	return &InProcess{env: env, front: front, method: method, path: path, id: env.NewRequestID(), started: env.WallClock()}
}

// Panicked logs a panic that ended the exchange (recovered by the caller)
// and returns the error to answer with; http.ErrAbortHandler goes on up.
func (x *InProcess) Panicked(v any) error {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	x.env.Log.Error("panic serving request", "request_id", x.id, "method", x.method, "path", x.path, "panic", v, "stack", string(debug.Stack()))
	return &sim.Error{Kind: sim.EINTERNAL, Code: "internal_error", Message: "Internal server error."}
}

// Done ends the exchange: op answered with status, or with err. It logs an
// internal error, the request's line, and counts it in the metrics.
func (x *InProcess) Done(op string, status int, err error) {
	env := x.env
	if err != nil && sim.AsError(err).Kind == sim.EINTERNAL {
		env.Log.Error("internal error", "request_id", x.id, "method", x.method, "path", x.path, "err", err)
	}
	env.logRequest(x.method, x.path, status, 0, x.started, x.id)
	if env.Metrics != nil {
		env.Metrics.Count(x.front, op, status, false)
	}
}
