package gate_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Authorization header values of the default fixture's keys. The first
// two share Acme Studio's window (120 a minute); the free plan's is 20.
const (
	allScopes = "Bearer mk_test_all_scopes" // read, generate, publish
	readOnly  = "Bearer mk_test_read_only"  // read
	freePlan  = "Bearer mk_test_free_plan"  // read, generate, publish
)

// open returns the gate of an engine on the default fixture, its clock
// manual: the rate windows stay where the test puts them.
func open(t *testing.T) (*gate.Gate, *sim.Engine) {
	t.Helper()
	world, err := fixtures.Load("", 0)
	require.NoError(t, err)
	eng, err := sim.Open(sim.Config{Path: filepath.Join(t.TempDir(), "state.db"), World: world,
		Clock: sim.NewClock(sim.ClockManual, sim.DefaultEpoch, nil)})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	return gate.New(eng), eng
}

// windows is how many requests each workspace's window has counted, read
// without counting one.
func windows(t *testing.T, eng *sim.Engine) map[uint64]int {
	t.Helper()
	out := map[uint64]int{}
	for _, key := range []string{"mk_test_all_scopes", "mk_test_free_plan", "mk_test_business", "mk_test_no_credits"} {
		p, ok := eng.Authenticate(key)
		require.True(t, ok, key)
		w := eng.RateWindow(p.WorkspaceID)
		out[p.WorkspaceID] = w.Limit - w.Remaining
	}
	return out
}

// fill uses up the window of a key's workspace, the last request let in.
func fill(authorization string) func(*testing.T, *gate.Gate, *sim.Engine) {
	return func(t *testing.T, g *gate.Gate, eng *sim.Engine) {
		t.Helper()
		for {
			pass, err := g.Enter(authorization, "getAccount", "read")
			require.NoError(t, err)
			if pass.Rate.Remaining == 0 {
				return
			}
		}
	}
}

// force answers the next request of op (every op for "*") with status,
// for every workspace.
func force(op string, status int) func(*testing.T, *gate.Gate, *sim.Engine) {
	return forceFor("", op, status)
}

// forceFor answers the next request of op by the workspace of key ("" for
// every workspace) with status.
func forceFor(key, op string, status int) func(*testing.T, *gate.Gate, *sim.Engine) {
	return func(t *testing.T, g *gate.Gate, eng *sim.Engine) {
		t.Helper()
		ws := gate.Global
		if key != "" {
			p, ok := eng.Authenticate(key)
			require.True(t, ok)
			ws = p.WorkspaceID
		}
		require.NoError(t, g.Force(ws, op, status, 1, func(string) bool { return true }))
	}
}

// fns lists what happens before a case's request.
func fns(f ...func(*testing.T, *gate.Gate, *sim.Engine)) []func(*testing.T, *gate.Gate, *sim.Engine) {
	return f
}

// forcedLeft is how many forced responses are still to come, in every
// scope of the default fixture.
func forcedLeft(g *gate.Gate) int {
	n := 0
	for ws := range uint64(5) {
		_, forced := g.Faults(ws)
		for _, f := range forced {
			n += f.Remaining
		}
	}
	return n
}

// TestEnterAndIdentify holds Gate.Enter to its order: the credential, the rate
// window, the scope, then a forced response. A step refuses before the
// next one runs: a refused credential counts nothing, the window refuses
// even a token without the scope, a missing scope is counted, and a forced
// response is taken only from a request the scope lets through. Identify
// authenticates and checks the scope without counting or taking a forced
// response.
func TestEnterAndIdentify(t *testing.T) {
	tests := []struct {
		name     string
		before   []func(*testing.T, *gate.Gate, *sim.Engine)
		identify bool // Identify instead of Enter
		auth     string
		op       string
		scope    string
		status   int    // the HTTP status of the refusal; 0 lets in
		code     string // the error code of the refusal
		counted  bool   // the request took a place in its workspace's window
		forced   int    // forced responses left after the request
	}{
		{name: "no credential", auth: "", op: "getAccount", scope: "read",
			status: http.StatusUnauthorized, code: "missing_credentials"},
		{name: "not a bearer token", auth: "Basic bWs6dGVzdA==", op: "getAccount", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "bearer without a token", auth: "Bearer ", op: "getAccount", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "a token with a space", auth: "Bearer mk_test all_scopes", op: "getAccount", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "an unknown token", auth: "Bearer mk_test_nope", op: "getAccount", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "an unknown token, the operation forced", before: fns(force("*", 503)), auth: "Bearer mk_test_nope", op: "getAccount", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials", forced: 1},

		{name: "let in", auth: allScopes, op: "createGeneration", scope: "generate", counted: true},
		{name: "the scheme in any case", auth: "bearer mk_test_read_only", op: "getAccount", scope: "read", counted: true},

		{name: "over the rate limit", before: fns(fill(freePlan)), auth: freePlan, op: "getAccount", scope: "read",
			status: http.StatusTooManyRequests, code: "rate_limited"},
		{name: "the window before the scope", before: fns(fill(allScopes)), auth: readOnly, op: "createGeneration", scope: "generate",
			status: http.StatusTooManyRequests, code: "rate_limited"},
		{name: "the window before a forced response", before: fns(fill(freePlan), force("*", 503)), auth: freePlan, op: "getAccount", scope: "read",
			status: http.StatusTooManyRequests, code: "rate_limited", forced: 1},
		{name: "another workspace's full window", before: fns(fill(freePlan)), auth: allScopes, op: "getAccount", scope: "read", counted: true},

		{name: "missing scope", auth: readOnly, op: "createGeneration", scope: "generate",
			status: http.StatusForbidden, code: "insufficient_scope", counted: true},
		{name: "the scope before a forced response", before: fns(force("createGeneration", 503)), auth: readOnly, op: "createGeneration", scope: "generate",
			status: http.StatusForbidden, code: "insufficient_scope", counted: true, forced: 1},

		{name: "forced 503", before: fns(force("createGeneration", 503)), auth: allScopes, op: "createGeneration", scope: "generate",
			status: http.StatusServiceUnavailable, code: "service_unavailable", counted: true},
		{name: "forced 500 for every operation", before: fns(force("*", 500)), auth: allScopes, op: "getAccount", scope: "read",
			status: http.StatusInternalServerError, code: "internal_error", counted: true},
		{name: "forced 429", before: fns(force("getAccount", 429)), auth: allScopes, op: "getAccount", scope: "read",
			status: http.StatusTooManyRequests, code: "rate_limited", counted: true},
		{name: "forced for another operation", before: fns(force("listModels", 503)), auth: allScopes, op: "getAccount", scope: "read",
			counted: true, forced: 1},
		{name: "forced for the workspace", before: fns(forceFor("mk_test_all_scopes", "getAccount", 503)), auth: readOnly, op: "getAccount", scope: "read",
			status: http.StatusServiceUnavailable, code: "service_unavailable", counted: true},
		{name: "forced for another workspace", before: fns(forceFor("mk_test_free_plan", "*", 503)), auth: allScopes, op: "getAccount", scope: "read",
			counted: true, forced: 1},
		{name: "the workspace's own before the global one", before: fns(force("getAccount", 500), forceFor("mk_test_all_scopes", "getAccount", 503)), auth: allScopes, op: "getAccount", scope: "read",
			status: http.StatusServiceUnavailable, code: "service_unavailable", counted: true, forced: 1},

		{name: "identify", identify: true, auth: allScopes, scope: "read"},
		{name: "identify without a scope to check", identify: true, auth: readOnly, scope: ""},
		{name: "identify, missing scope", identify: true, auth: readOnly, scope: "generate",
			status: http.StatusForbidden, code: "insufficient_scope"},
		{name: "identify, unknown token", identify: true, auth: "Bearer mk_test_nope", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "identify over the rate limit", before: fns(fill(freePlan)), identify: true, auth: freePlan, scope: "read"},
		{name: "identify takes no forced response", before: fns(force("*", 503)), identify: true, auth: allScopes, scope: "read", forced: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, eng := open(t)
			for _, f := range tt.before {
				f(t, g, eng)
			}
			want := windows(t, eng)
			var pass gate.Pass
			var err error
			if tt.identify {
				pass, err = g.Identify(tt.auth, tt.scope)
			} else {
				pass, err = g.Enter(tt.auth, tt.op, tt.scope)
			}

			if tt.status == 0 {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				e := sim.AsError(err)
				assert.Equal(t, tt.status, wire.Status(e.Kind), "%v", err)
				assert.Equal(t, tt.code, e.Code)
			}
			if tt.counted {
				want[pass.Principal.WorkspaceID]++
			}
			assert.Equal(t, want, windows(t, eng), "the windows after the request")
			assert.Equal(t, tt.forced, forcedLeft(g), "forced responses left")
			if tt.status == http.StatusUnauthorized {
				assert.False(t, pass.Authenticated(), "a refused credential has no window")
				return
			}
			require.True(t, pass.Authenticated())
			w := eng.RateWindow(pass.Principal.WorkspaceID)
			assert.Equal(t, w.Limit, pass.Rate.Limit, "the pass carries the window")
			assert.Equal(t, w.Remaining, pass.Rate.Remaining)
			if tt.code == "rate_limited" {
				// At 09:00:00 on the manual clock, the window reopens in a minute.
				assert.Equal(t, time.Minute, pass.Rate.RetryAfter)
				assert.EqualValues(t, 60, sim.AsError(err).Details["retry_after_seconds"])
			}
		})
	}
}
