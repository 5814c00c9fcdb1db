// Package gate is the one door every front goes through before an
// operation runs: it authenticates a credential, counts the request against
// the workspace's rate window and checks the operation's scope. REST and MCP
// call the same Count, so both count requests identically. It keeps no
// fault state: a forced status is a fault rule, whose error Forced makes.
package gate

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/bearer"
	"github.com/mediamock/mediamock/sim"
)

// Gate guards the operations of one engine. It keeps no fault state: the
// faults a request meets are rules of the fault store (package fault),
// which the fronts apply at each stage.
type Gate struct {
	eng *sim.Engine
	// authentications counts the credentials resolved (Authentications).
	authentications atomic.Uint64
}

// New returns the gate of an engine.
func New(eng *sim.Engine) *Gate { return &Gate{eng: eng} }

// Pass is what the gate knows of a request it let through, or refused after
// authenticating it.
type Pass struct {
	Principal sim.Principal
	// Rate is the workspace's window after this request, or the anonymous
	// window's (Anonymous).
	Rate sim.RateDecision
	// Anonymous: the request had no usable credential, and was counted in
	// the server's anonymous window (Gate.Anonymous), whose headers its
	// 401 carries.
	Anonymous bool
}

// Counted reports whether the pass carries a window the answer's
// rate-limit headers report: the workspace's, or the anonymous one.
func (p Pass) Counted() bool { return p.Authenticated() || p.Anonymous }

// Anonymous counts a request without a usable credential in the server's
// anonymous window (never a workspace's), for the rate-limit headers of
// its 401.
func (g *Gate) Anonymous() Pass {
	return Pass{Rate: g.eng.AllowAnonymous(), Anonymous: true}
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
	token, ok := bearer.Token(header)
	if !ok || token == "" || strings.ContainsAny(token, " \t") {
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

// The protected resources a token may be bound to (RFC 8707), as the
// doors name them.
const (
	ResourceAPI = "/api/v1" // the REST API
	ResourceMCP = "/mcp"    // the MCP server
)

// ResourceMetadataPath is where the metadata of a protected resource
// (RFC 9728) is served, followed by the resource's path: the authorization
// server serves it, and a resource's 401 points at it.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadataURL is the address of the metadata of the protected
// resource (ResourceAPI, ResourceMCP) of the server at root, for the
// WWW-Authenticate of its 401s.
func ResourceMetadataURL(root, resource string) string {
	return root + ResourceMetadataPath + resource
}

// credential authenticates an Authorization header value for a protected
// resource ("" for none in particular): a token issued for another
// resource alone is refused as invalid here (RFC 8707; the MCP
// authorization spec says a server must check it was issued for it).
func (g *Gate) credential(authorization, resource string) (sim.Principal, error) {
	token, err := Bearer(authorization)
	if err != nil {
		return sim.Principal{}, err
	}
	p, err := g.Authenticate(token)
	if err != nil {
		return p, err
	}
	if !p.Reaches(resource) {
		return sim.Principal{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_credentials",
			Message: "The access token was issued for " + strings.Join(p.Resources, " and ") + ", not for " + resource + ": ask the authorization server for a token with resource=<server>" + resource + ", or with no resource.",
			Details: map[string]any{"token_resources": p.Resources, "resource": resource}}
	}
	return p, nil
}

// Count lets in what counts against the rate limit: an operation of the
// API, or what is none (MCP's resource reads). It authenticates, counts
// against the workspace's window and checks the scope, in that order. The
// error is the spec's error for the first step that refuses; the pass
// carries the rate window whenever the credential was authenticated. A
// forced status (a fault rule of kind status) is taken after it, by the
// caller, with Forced.
func (g *Gate) Count(authorization, resource, scope string) (Pass, error) {
	p, err := g.credential(authorization, resource)
	if err != nil {
		return Pass{}, err
	}
	return g.CountAs(p, scope)
}

// CountAs is Count for a principal the front has authenticated already
// (MCP authenticates each HTTP request once, as it arrives).
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
// window resets, and its Remaining to 0.
func (g *Gate) Forced(status int, pass *Pass) error {
	if status == 429 && pass.Authenticated() {
		pass.Rate.RetryAfter = sim.RetryAfter(pass.Rate.Reset, g.eng.Clock().Now())
		pass.Rate.Remaining = 0 // the headers say what the answer says: nothing left
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
func (g *Gate) Identify(authorization, resource, scope string) (Pass, error) {
	p, err := g.credential(authorization, resource)
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
