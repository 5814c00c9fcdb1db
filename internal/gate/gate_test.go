package gate_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/testkit"
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
	eng := testkit.Engine(t)
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
			pass, err := g.Count(authorization, "", "read")
			require.NoError(t, err)
			if pass.Rate.Remaining == 0 {
				return
			}
		}
	}
}

// fns lists what happens before a case's request.
func fns(f ...func(*testing.T, *gate.Gate, *sim.Engine)) []func(*testing.T, *gate.Gate, *sim.Engine) {
	return f
}

// TestCountAndIdentify holds Gate.Count to its order: the credential, the
// rate window, then the scope. A step refuses before the next one runs: a
// refused credential counts nothing, the window refuses even a token
// without the scope, and a missing scope is counted. Identify authenticates
// and checks the scope without counting. (Forced responses are fault rules
// now, taken after the gate: TestAdmissionOrder in package ops.)
func TestCountAndIdentify(t *testing.T) {
	tests := []struct {
		name     string
		before   []func(*testing.T, *gate.Gate, *sim.Engine)
		identify bool // Identify instead of Count
		auth     string
		scope    string
		status   int    // the HTTP status of the refusal; 0 lets in
		code     string // the error code of the refusal
		counted  bool   // the request took a place in its workspace's window
	}{
		{name: "no credential", auth: "", scope: "read",
			status: http.StatusUnauthorized, code: "missing_credentials"},
		{name: "not a bearer token", auth: "Basic bWs6dGVzdA==", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "bearer without a token", auth: "Bearer ", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "a token with a space", auth: "Bearer mk_test all_scopes", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "an unknown token", auth: "Bearer mk_test_nope", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},

		{name: "let in", auth: allScopes, scope: "generate", counted: true},
		{name: "the scheme in any case", auth: "bearer mk_test_read_only", scope: "read", counted: true},

		{name: "over the rate limit", before: fns(fill(freePlan)), auth: freePlan, scope: "read",
			status: http.StatusTooManyRequests, code: "rate_limited"},
		{name: "the window before the scope", before: fns(fill(allScopes)), auth: readOnly, scope: "generate",
			status: http.StatusTooManyRequests, code: "rate_limited"},
		{name: "another workspace's full window", before: fns(fill(freePlan)), auth: allScopes, scope: "read", counted: true},

		{name: "missing scope", auth: readOnly, scope: "generate",
			status: http.StatusForbidden, code: "insufficient_scope", counted: true},

		{name: "identify", identify: true, auth: allScopes, scope: "read"},
		{name: "identify without a scope to check", identify: true, auth: readOnly, scope: ""},
		{name: "identify, missing scope", identify: true, auth: readOnly, scope: "generate",
			status: http.StatusForbidden, code: "insufficient_scope"},
		{name: "identify, unknown token", identify: true, auth: "Bearer mk_test_nope", scope: "read",
			status: http.StatusUnauthorized, code: "invalid_credentials"},
		{name: "identify over the rate limit", before: fns(fill(freePlan)), identify: true, auth: freePlan, scope: "read"},
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
				pass, err = g.Identify(tt.auth, "", tt.scope)
			} else {
				pass, err = g.Count(tt.auth, "", tt.scope)
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
