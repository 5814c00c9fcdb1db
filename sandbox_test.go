package mediamock_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// callAs makes an API request with a key.
func callAs(t testing.TB, srv *mediamock.Server, key, method, path, body string) (int, map[string]any) {
	t.Helper()
	status, out, _ := testkit.REST(t, srv, key, method, path, body)
	return status, out
}

// The Go side of a sandbox: its own keys and Controls, its work finished
// without the shared clock, reset and deleted at the end of the test.
func TestSandboxInGo(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	var kept *mediamock.Sandbox
	t.Run("a test with a sandbox", func(t *testing.T) {
		sb := srv.Sandbox(t, func(s *mediamock.SandboxSpec) {
			s.From = "Pixel Garage"
			s.Credits = new(40)
			s.MonthlyGifts = &[]mediamock.Gift{}
		})
		kept = sb
		assert.Equal(t, sb.Keys["free_plan"], sb.APIKey)
		require.NoError(t, sb.FailNext(mediamock.FailRule{Count: 1}))
		sb.SetLatency("getAccount", time.Millisecond)

		_, created := callAs(t, srv, sb.APIKey, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"x"}`)
		id := uint64(created["assets"].([]any)[0].(map[string]any)["id"].(float64))
		_, theirs := callAs(t, srv, mediamock.KeyAllScopes, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"y"}`)
		theirsID := uint64(theirs["assets"].([]any)[0].(map[string]any)["id"].(float64))
		status, acct := callAs(t, srv, sb.APIKey, "GET", "/account", "")
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "free", acct["plan"])

		n, err := sb.RunUntilIdle(time.Hour)
		require.NoError(t, err)
		assert.Positive(t, n)
		a, err := srv.Asset(id)
		require.NoError(t, err)
		assert.Equal(t, "failed", a.Status, "the sandbox's fault")
		a, err = srv.Asset(theirsID)
		require.NoError(t, err)
		assert.Equal(t, "queued", a.Status, "not the sandbox's job")
		balance, err := sb.Balance()
		require.NoError(t, err)
		assert.EqualValues(t, 40, balance, "charged and refunded")
		ledger, err := sb.Ledger()
		require.NoError(t, err)
		assert.Len(t, ledger, 3, "grant, charge, refund")

		journal := sb.Journal(mediamock.JournalFilter{})
		require.Len(t, journal, 2)
		assert.Equal(t, "getAccount", journal[0].Operation)
		assert.Positive(t, journal[0].InjectedLatencyMS)
		assert.Equal(t, 1, sb.Coverage().Lifecycle["generation_failed_refunded"])
		all := srv.Journal(mediamock.JournalFilter{})
		require.Len(t, all, 3, "the server's journal holds every request")
		assert.Equal(t, sb.ID, all[0].SandboxID)
		assert.Empty(t, all[1].SandboxID, "the fixture workspace's")
		f, err := srv.Faults()
		require.NoError(t, err)
		assert.Empty(t, f.LatencyMS, "the server's faults are untouched")

		require.NoError(t, sb.Reset())
		balance, _ = sb.Balance()
		assert.EqualValues(t, 40, balance)
		assert.Empty(t, sb.Journal(mediamock.JournalFilter{}))
		_, err = srv.Asset(id)
		assert.Error(t, err, "what it made is gone")
	})
	status, _ := callAs(t, srv, kept.APIKey, "GET", "/account", "")
	assert.Equal(t, http.StatusUnauthorized, status, "deleted when its test ended")
	assert.NoError(t, kept.Delete(), "deleting twice is no error")
}

// One server, a sandbox per test: faults set in one never reach another.
func ExampleServer_Sandbox() {
	srv, _ := mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockManual})
	defer srv.Close()

	a, _ := srv.NewSandbox(mediamock.SandboxSpec{})
	b, _ := srv.NewSandbox(mediamock.SandboxSpec{})
	a.FailNext(mediamock.FailRule{Count: 1})
	for _, sb := range []*mediamock.Sandbox{a, b} {
		req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations", strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"a fox"}`))
		req.Header.Set("Authorization", "Bearer "+sb.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, _ := srv.Client().Do(req)
		resp.Body.Close()
		sb.RunUntilIdle(time.Hour) // its own jobs; the shared clock stays
		fmt.Println(sb.Coverage().Lifecycle["generation_failed_refunded"], sb.Coverage().Lifecycle["generation_completed"])
		sb.Delete()
	}
	// Output:
	// 1 0
	// 0 1
}
