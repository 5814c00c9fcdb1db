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
	"time"

	"github.com/mediamock/mediamock/sim"
)

// Gate guards the operations of one engine.
type Gate struct {
	eng    *sim.Engine
	mu     sync.Mutex
	delays map[string]time.Duration
	forced []ForcedResponse
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
	p, ok := g.eng.Authenticate(token)
	if !ok {
		return sim.Principal{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_credentials",
			Message: "The bearer token is not a known API key or access token."}
	}
	return p, nil
}

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
	if status := g.take(op); status != 0 {
		if status == 429 {
			pass.Rate.RetryAfter = sim.RetryAfter(pass.Rate.Reset, g.eng.Clock().Now())
		}
		return pass, forcedError(status, pass.Rate)
	}
	return pass, nil
}

// Identify lets in what does not count against the rate limit (MCP's
// protocol messages and resource reads; REST answers outside the
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

// Force answers the next count requests of an operation ("*" for any) with
// status 500, 503 or 429, after authentication and the rate limit. known
// tells which operations exist.
func (g *Gate) Force(operation string, status, count int, known func(string) bool) error {
	if status != 500 && status != 503 && status != 429 {
		return sim.InvalidError([]sim.Violation{{In: "body", Field: "status", Reason: "must be 429, 500 or 503", Allowed: []any{429, 500, 503}}})
	}
	if operation != "*" && !known(operation) {
		return sim.InvalidError([]sim.Violation{{In: "body", Field: "operation", Reason: fmt.Sprintf("unknown operation %q", operation)}})
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forced = append(g.forced, ForcedResponse{Operation: operation, Status: status, Remaining: max(1, count)})
	return nil
}

// take returns the status to force on a request of op, if any.
func (g *Gate) take(op string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.forced {
		fr := &g.forced[i]
		if fr.Operation == op || fr.Operation == "*" {
			status := fr.Status
			if fr.Remaining--; fr.Remaining <= 0 {
				g.forced = slices.Delete(g.forced, i, i+1)
			}
			return status
		}
	}
	return 0
}

// SetLatency adds wall-clock latency to an operation ("*" for every one);
// zero removes it.
func (g *Gate) SetLatency(operation string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d <= 0 {
		delete(g.delays, operation)
		return
	}
	if g.delays == nil {
		g.delays = map[string]time.Duration{}
	}
	g.delays[operation] = d
}

// Latency is the latency added to an operation.
func (g *Gate) Latency(op string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d, ok := g.delays[op]; ok {
		return d
	}
	return g.delays["*"]
}

// Faults lists the gate's faults: latency per operation in milliseconds and
// the forced responses still to come.
func (g *Gate) Faults() (map[string]int64, []ForcedResponse) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lat := make(map[string]int64, len(g.delays))
	for op, d := range g.delays {
		lat[op] = d.Milliseconds()
	}
	return lat, append([]ForcedResponse{}, g.forced...)
}

// Clear removes every fault of the gate.
func (g *Gate) Clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.delays, g.forced = nil, nil
}

// forcedError is the error of a forced response.
func forcedError(status int, d sim.RateDecision) *sim.Error {
	switch status {
	case 429:
		return &sim.Error{Kind: sim.ERATELIMIT, Code: "rate_limited", Message: "Rate limit reached (forced by the control API).",
			Details: map[string]any{"limit": d.Limit, "retry_after_seconds": int(d.RetryAfter / time.Second)}}
	case 503:
		return &sim.Error{Kind: sim.EUNAVAILABLE, Code: "service_unavailable", Message: "The service is temporarily unavailable; retry later (forced by the control API)."}
	}
	return &sim.Error{Kind: sim.EINTERNAL, Code: "internal_error", Message: "Internal server error (forced by the control API)."}
}
