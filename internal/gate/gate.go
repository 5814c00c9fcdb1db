// Package gate is the one door every front goes through before an
// operation runs: it authenticates a credential, counts the request against
// the workspace's rate window, checks the operation's scope and applies the
// faults injected per operation. REST and MCP call the same Enter, so both
// count requests identically.
package gate

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// Gate guards the operations of one engine.
type Gate struct {
	eng    *sim.Engine
	mu     sync.Mutex
	faults map[uint64]*opFaults // by workspace; Global for every workspace
	// authentications counts the credentials resolved (Authentications).
	authentications atomic.Uint64
}

// Global is the scope of faults that apply to every workspace.
const Global uint64 = 0

// opFaults are the faults injected per operation in one scope.
type opFaults struct {
	delays map[string]time.Duration
	forced []ForcedResponse
}

// scope returns the faults of a scope, made when make is true.
func (g *Gate) scope(ws uint64, make bool) *opFaults {
	f := g.faults[ws]
	if f == nil && make {
		if g.faults == nil {
			g.faults = map[uint64]*opFaults{}
		}
		f = &opFaults{}
		g.faults[ws] = f
	}
	return f
}

// New returns the gate of an engine.
func New(eng *sim.Engine) *Gate { return &Gate{eng: eng} }

// Pass is what the gate knows of a request it let through, or refused after
// authenticating it.
type Pass struct {
	Principal sim.Principal
	// Rate is the workspace's window after this request.
	Rate sim.RateDecision
}

// Authenticated reports whether the credential identified a workspace, so
// that the pass carries its rate window.
func (p Pass) Authenticated() bool { return p.Principal.WorkspaceID != 0 }

// Bearer reads the token of an Authorization header value.
func Bearer(header string) (string, error) {
	if header == "" {
		return "", &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "missing_credentials",
			Message: "Send an API key or access token as Authorization: Bearer <token>."}
	}
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_credentials",
			Message: "The Authorization header must be Bearer <token>."}
	}
	return token, nil
}

// Authenticate resolves a token to its principal.
func (g *Gate) Authenticate(token string) (sim.Principal, error) {
	g.authentications.Add(1)
	p, ok := g.eng.Authenticate(token)
	if !ok {
		return sim.Principal{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_credentials",
			Message: "The bearer token is not a known API key or access token."}
	}
	return p, nil
}

// Authentications is how many tokens the gate has resolved: a front
// authenticates each request once, and a test holds it to that.
func (g *Gate) Authentications() uint64 { return g.authentications.Load() }

// credential authenticates an Authorization header value.
func (g *Gate) credential(authorization string) (sim.Principal, error) {
	token, err := Bearer(authorization)
	if err != nil {
		return sim.Principal{}, err
	}
	return g.Authenticate(token)
}

// Enter lets a request of an operation in, given the Authorization header
// value: it authenticates, counts the request against the workspace's rate
// window, checks the scope and takes a forced response, in that order. The
// error is the spec's error for the first step that refuses; the pass
// carries the rate window whenever the credential was authenticated.
func (g *Gate) Enter(authorization, op, scope string) (Pass, error) {
	p, err := g.credential(authorization)
	if err != nil {
		return Pass{}, err
	}
	return g.EnterAs(p, op, scope)
}

// EnterAs is Enter for a principal the front has authenticated already
// (MCP authenticates each HTTP request once, as it arrives): it counts,
// checks the scope and takes a forced response.
func (g *Gate) EnterAs(p sim.Principal, op, scope string) (Pass, error) {
	pass, err := g.CountAs(p, scope)
	if err != nil {
		return pass, err
	}
	if status := g.take(pass.Principal.WorkspaceID, op); status != 0 {
		return pass, g.Forced(status, &pass)
	}
	return pass, nil
}

// Count lets in what counts against the rate limit but is no operation of
// the API (MCP's resource reads): it authenticates, counts against the
// workspace's window and checks the scope, in that order, as Enter does,
// without forced responses, which name operations.
func (g *Gate) Count(authorization, scope string) (Pass, error) {
	p, err := g.credential(authorization)
	if err != nil {
		return Pass{}, err
	}
	return g.CountAs(p, scope)
}

// CountAs is Count for a principal the front has authenticated already.
func (g *Gate) CountAs(p sim.Principal, scope string) (Pass, error) {
	pass := Pass{Principal: p, Rate: g.eng.Allow(p.WorkspaceID)}
	if !pass.Rate.Allowed {
		secs := int(pass.Rate.RetryAfter / time.Second)
		return pass, &sim.Error{Kind: sim.ERATELIMIT, Code: "rate_limited",
			Message: fmt.Sprintf("Rate limit of %d requests per minute reached; retry in %d seconds.", pass.Rate.Limit, secs),
			Details: map[string]any{"limit": pass.Rate.Limit, "retry_after_seconds": secs}}
	}
	if !p.HasScope(scope) {
		return pass, scopeError(scope, p)
	}
	return pass, nil
}

// Forced is the error of a forced status for a request the gate let in:
// a 429 sets the pass's Retry-After to the time until the workspace's
// window resets.
func (g *Gate) Forced(status int, pass *Pass) error {
	if status == 429 && pass.Authenticated() {
		pass.Rate.RetryAfter = sim.RetryAfter(pass.Rate.Reset, g.eng.Clock().Now())
	}
	return ForcedError(status, pass.Rate)
}

// Identify lets in what does not count against the rate limit (MCP's
// protocol messages; REST answers outside the
// operations: unknown paths, other methods, bodies too large, the OpenAPI
// document): it authenticates the credential and, when scope is not empty,
// checks it, without counting a request or taking a forced response. The
// pass carries the workspace's window as it is; the error is the spec's
// error for the first step that refuses.
func (g *Gate) Identify(authorization, scope string) (Pass, error) {
	p, err := g.credential(authorization)
	if err != nil {
		return Pass{}, err
	}
	pass := Pass{Principal: p, Rate: g.eng.RateWindow(p.WorkspaceID)}
	if scope != "" && !p.HasScope(scope) {
		return pass, scopeError(scope, p)
	}
	return pass, nil
}

func scopeError(scope string, p sim.Principal) *sim.Error {
	return &sim.Error{Kind: sim.EFORBIDDEN, Code: "insufficient_scope",
		Message: fmt.Sprintf("This operation needs the %s scope; the token has %s.", scope, scopeList(p.Scopes)),
		Details: map[string]any{"required_scope": scope, "granted_scopes": p.Scopes}}
}

func scopeList(scopes []string) string {
	if len(scopes) == 0 {
		return "none"
	}
	return strings.Join(scopes, ", ")
}

// ForcedResponse answers the next Remaining requests of Operation with Status.
type ForcedResponse struct {
	Operation string `json:"operation"`
	Status    int    `json:"status"`
	Remaining int    `json:"remaining"`
}

// Force answers the next count requests of an operation ("*" for any)
// with status 500, 503 or 429, after authentication and the rate limit,
// for the requests of workspace ws (Global: of every workspace). known
// tells which operations exist.
func (g *Gate) Force(ws uint64, operation string, status, count int, known func(string) bool) error {
	if status != 500 && status != 503 && status != 429 {
		return sim.InvalidError([]sim.Violation{{In: "body", Field: "status", Reason: "must be 429, 500 or 503", Allowed: []any{429, 500, 503}}})
	}
	if operation != "*" && !known(operation) {
		return sim.InvalidError([]sim.Violation{{In: "body", Field: "operation", Reason: fmt.Sprintf("unknown operation %q", operation)}})
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.scope(ws, true)
	f.forced = append(f.forced, ForcedResponse{Operation: operation, Status: status, Remaining: max(1, count)})
	return nil
}

// take returns the status to force on a request of op by workspace ws, if
// any: the workspace's own forced responses come first, then the global
// ones.
func (g *Gate) take(ws uint64, op string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, scope := range [2]uint64{ws, Global} {
		f := g.scope(scope, false)
		if f == nil {
			continue
		}
		for i := range f.forced {
			fr := &f.forced[i]
			if fr.Operation == op || fr.Operation == "*" {
				status := fr.Status
				if fr.Remaining--; fr.Remaining <= 0 {
					f.forced = slices.Delete(f.forced, i, i+1)
				}
				return status
			}
		}
		if ws == Global {
			break
		}
	}
	return 0
}

// SetLatency adds wall-clock latency to an operation ("*" for every one)
// for the requests of workspace ws (Global: of every workspace); zero
// removes it.
func (g *Gate) SetLatency(ws uint64, operation string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.scope(ws, d > 0)
	if d <= 0 {
		if f != nil {
			delete(f.delays, operation)
		}
		return
	}
	if f.delays == nil {
		f.delays = map[string]time.Duration{}
	}
	f.delays[operation] = d
}

// Latency is the latency added to a request of op by workspace ws: the
// workspace's own for the operation, or for every operation, else the
// global one.
func (g *Gate) Latency(ws uint64, op string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.faults) == 0 {
		return 0
	}
	for _, scope := range [2]uint64{ws, Global} {
		if f := g.scope(scope, false); f != nil {
			if d, ok := f.delays[op]; ok {
				return d
			}
			if d, ok := f.delays["*"]; ok {
				return d
			}
		}
		if ws == Global {
			break
		}
	}
	return 0
}

// Faults lists the faults of a scope: latency per operation in
// milliseconds and the forced responses still to come.
func (g *Gate) Faults(ws uint64) (map[string]int64, []ForcedResponse) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lat, forced := map[string]int64{}, []ForcedResponse{}
	if f := g.scope(ws, false); f != nil {
		for op, d := range f.delays {
			lat[op] = d.Milliseconds()
		}
		forced = append(forced, f.forced...)
	}
	return lat, forced
}

// Active reports whether a scope has any fault.
func (g *Gate) Active(ws uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.scope(ws, false)
	return f != nil && (len(f.delays) > 0 || len(f.forced) > 0)
}

// Clear removes the faults of a scope.
func (g *Gate) Clear(ws uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.faults, ws)
}

// ClearScoped removes the faults of every workspace, keeping the global ones.
func (g *Gate) ClearScoped() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for ws := range g.faults {
		if ws != Global {
			delete(g.faults, ws)
		}
	}
}

// ClearAll removes every fault of every scope.
func (g *Gate) ClearAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults = nil
}

// ForcedError is the error of a forced response.
func ForcedError(status int, d sim.RateDecision) *sim.Error {
	switch status {
	case 429:
		return &sim.Error{Kind: sim.ERATELIMIT, Code: "rate_limited", Message: "Rate limit reached (forced by the control API).",
			Details: map[string]any{"limit": d.Limit, "retry_after_seconds": int(d.RetryAfter / time.Second)}}
	case 503:
		return &sim.Error{Kind: sim.EUNAVAILABLE, Code: "service_unavailable", Message: "The service is temporarily unavailable; retry later (forced by the control API)."}
	}
	return &sim.Error{Kind: sim.EINTERNAL, Code: "internal_error", Message: "Internal server error (forced by the control API)."}
}
