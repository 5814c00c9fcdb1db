package fault_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// A rule: a forced status with a probability, targeted at one operation;
// a creation that meets a delivery fault was made and charged all the same.
func TestFaultRulesTargetAndStrike(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	status, body := testkit.Control(t, srv, "POST", "/faults/rules", `{"kind":"status","status":503,"operation":"listModels","first":2}`)
	require.Equal(t, 201, status, body)
	rule := testkit.JSON(t, body)
	assert.Equal(t, "flt_1", rule["id"])

	for i := range 3 {
		st, out, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/models", "")
		if i < 2 {
			assert.Equal(t, 503, st)
			assert.Equal(t, "service_unavailable", out["error"].(map[string]any)["code"])
		} else {
			assert.Equal(t, 200, st, "the rule is spent after first=2")
		}
	}
	st, _, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", "")
	assert.Equal(t, 200, st, "another operation is not targeted")
	f, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, f.Rules, "a spent rule is removed")

	// A reset after the creation ran: the client saw nothing, the job exists.
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "reset", Operation: "createGeneration", First: 1})
	require.NoError(t, err)
	acme := testkit.API(t, srv, "GET", "/account", "")
	before := acme["credits_balance"]
	require.NoError(t, err)
	req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations", strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"lost answer"}`))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	_, err = freshClient().Do(req)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	after := testkit.API(t, srv, "GET", "/account", "")["credits_balance"]
	assert.NotEqual(t, before, after, "the creation was charged though its answer was lost")
	e := srv.Journal(mediamock.JournalFilter{Operation: "createGeneration", Limit: 1})
	require.Len(t, e, 1)
	assert.Equal(t, 201, e[0].Status)
	assert.Equal(t, "reset", e[0].Fault)
}

// Same seed, same requests: the same faults, request for request.
func TestFaultsFollowTheSeed(t *testing.T) {
	run := func() []byte {
		srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual), func(o *mediamock.Options) {
			o.NoListener, o.JournalSize = true, 2000
		})
		for _, spec := range []mediamock.FaultSpec{
			{Kind: "reset", Probability: new(0.1)},
			{Kind: "truncate", Probability: new(0.2), Operation: "listModels"},
			{Kind: "latency", Distribution: "lognormal", MedianMS: new(int64(0)), Sigma: new(1.0), Probability: new(0.3)},
			{Kind: "status", Status: 503, Probability: new(0.05)},
		} {
			_, err := srv.AddFault(spec)
			require.NoError(t, err)
		}
		c := srv.Client()
		for i := range 1000 {
			path := []string{"/account", "/models"}[i%2]
			if resp, err := get(t, c, srv.BaseURL()+path); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		entries := srv.Journal(mediamock.JournalFilter{})
		require.Len(t, entries, 1000)
		var b bytes.Buffer
		for _, e := range entries {
			// Wall-clock measurements are the only fields that differ.
			e.Time, e.DurationMS = time.Time{}, 0
			line, err := json.Marshal(e)
			require.NoError(t, err)
			b.Write(line)
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	first, second := run(), run()
	assert.Equal(t, string(first), string(second), "byte-identical journals")
	for _, kind := range []string{`"fault":"reset"`, `"fault":"truncate"`, `"fault":"status"`} {
		assert.Contains(t, string(first), kind)
	}
}

// A sandbox's fault is its own: another sandbox, and the server's
// workspaces, never meet it.
func TestFaultsStayInTheirSandbox(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	a, b := srv.Sandbox(t), srv.Sandbox(t)
	_, err := a.AddFault(mediamock.FaultSpec{Kind: "reset"})
	require.NoError(t, err)
	c := freshClient()
	for range 20 {
		for _, key := range []string{b.APIKey, mediamock.KeyAllScopes} {
			req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := c.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
	}
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	req.Header.Set("Authorization", "Bearer "+a.APIKey)
	_, err = c.Do(req)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "the sandbox's own requests meet it")
	for _, e := range srv.Journal(mediamock.JournalFilter{}) {
		if e.Fault != "" {
			assert.Equal(t, a.ID, e.SandboxID, "a fault only ever struck sandbox %s", a.ID)
		}
	}
	fb, err := b.Faults()
	require.NoError(t, err)
	assert.Empty(t, fb.Rules)
	assert.False(t, fb.GlobalFaults)
}
