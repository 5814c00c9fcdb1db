package contract_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sandbox is what a suite reads of the sandbox it made.
type sandbox struct {
	ID           string            `json:"id"`
	WorkspaceID  uint64            `json:"workspace_id"`
	APIKey       string            `json:"api_key"`
	Keys         map[string]string `json:"keys"`
	ControlToken string            `json:"control_token"`
}

// worker is one test suite of many on one server: what it breaks in its
// own sandbox, and what it must see then.
type worker struct {
	name   string
	faults []req // control calls, made with the sandbox's control token
	// what its generations end as, and what its account reads answer
	generations string
	accounts    int
	latency     bool // its journal shows injected latency
}

var workers = []worker{
	{name: "fails every generation", generations: "failed", accounts: http.StatusOK,
		faults: []req{{method: "POST", path: "/_mock/faults/fail-next", body: `{"count":1000}`}}},
	{name: "adds latency", generations: "completed", accounts: http.StatusOK, latency: true,
		faults: []req{{method: "PUT", path: "/_mock/faults/latency/*", body: `{"ms":2}`}}},
	{name: "forces 429s", generations: "completed", accounts: http.StatusTooManyRequests,
		faults: []req{{method: "POST", path: "/_mock/faults/responses", body: `{"operation":"getAccount","status":429,"count":1000}`}}},
	{name: "fails at a rate of 1", generations: "failed", accounts: http.StatusOK,
		faults: []req{{method: "PUT", path: "/_mock/faults/failure-rate", body: `{"rate":1}`}}},
	{name: "forces 503s", generations: "completed", accounts: http.StatusServiceUnavailable,
		faults: []req{{method: "POST", path: "/_mock/faults/responses", body: `{"operation":"*","status":503,"count":5}`},
			{method: "POST", path: "/_mock/faults/responses", body: `{"operation":"getAccount","status":503,"count":1000}`}}},
	{name: "plain 1", generations: "completed", accounts: http.StatusOK},
	{name: "plain 2", generations: "completed", accounts: http.StatusOK},
	{name: "plain 3", generations: "completed", accounts: http.StatusOK},
}

// TestParallelSuitesInSandboxes runs 8 suites at once against one server,
// each in a sandbox of its own, each setting faults that conflict with the
// others': every suite sees its own faults and nobody else's. It uses HTTP
// only, so it also runs against a running server (MOCKSERVER_URL).
func TestParallelSuitesInSandboxes(t *testing.T) {
	e := startShared(t)
	for _, w := range workers {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			e := e.sub(t)
			var sb sandbox
			e.call(req{method: "POST", path: "/_mock/sandboxes", body: `{"name":"` + w.name + `"}`}).expect(http.StatusCreated).Decode(&sb)
			t.Cleanup(func() {
				e.call(req{method: "DELETE", path: "/_mock/sandboxes/" + sb.ID, token: sb.ControlToken, contentType: "application/json"}).expect(http.StatusOK)
			})
			for _, f := range w.faults {
				f.token = sb.ControlToken
				e.call(f).expect(http.StatusOK)
			}
			if w.name == "forces 503s" { // its first 5 calls of anything answer 503
				for range 5 {
					e.call(req{method: "GET", path: "/models", token: sb.APIKey}).expect(http.StatusServiceUnavailable)
				}
			}
			var ids []int64
			for i := range 3 {
				g := e.call(req{method: "POST", path: "/generations", token: sb.APIKey,
					body: fmt.Sprintf(`{"modality":"image","model_id":"imagen-4","prompt":"suite %s, image %d"}`, w.name, i)}).expect(http.StatusCreated)
				ids = append(ids, decodeAs[apiGeneration](g).Assets[0].ID)
				e.call(req{method: "GET", path: "/account", token: sb.APIKey}).expect(w.accounts)
			}
			e.call(req{method: "POST", path: "/_mock/sandboxes/" + sb.ID + "/run", token: sb.ControlToken, body: `{"limit":"1h"}`}).expect(http.StatusOK)
			for _, id := range ids {
				g := decodeAs[apiGeneration](e.call(req{method: "GET", path: fmt.Sprintf("/generations/%d", id), token: sb.APIKey}).expect(http.StatusOK))
				assert.Equal(t, w.generations, g.Assets[0].Status, "generation %d", id)
			}

			var journal struct {
				Entries []struct {
					WorkspaceID       uint64 `json:"workspace_id"`
					SandboxID         string `json:"sandbox_id"`
					Status            int    `json:"status"`
					InjectedLatencyMS int64  `json:"injected_latency_ms"`
				} `json:"entries"`
			}
			e.call(req{method: "GET", path: "/_mock/journal?limit=100", token: sb.ControlToken}).expect(http.StatusOK).Decode(&journal)
			require.NotEmpty(t, journal.Entries)
			for _, en := range journal.Entries {
				assert.Equal(t, sb.WorkspaceID, en.WorkspaceID, "only its own requests")
				assert.Equal(t, sb.ID, en.SandboxID)
				assert.Equal(t, w.latency, en.InjectedLatencyMS > 0, "latency only where it was set")
			}
			var cov struct {
				Lifecycle map[string]int `json:"lifecycle"`
			}
			e.call(req{method: "GET", path: "/_mock/coverage", token: sb.ControlToken}).expect(http.StatusOK).Decode(&cov)
			if w.generations == "failed" {
				assert.Equal(t, len(ids), cov.Lifecycle["generation_failed_refunded"])
				assert.Zero(t, cov.Lifecycle["generation_completed"])
			} else {
				assert.Equal(t, len(ids), cov.Lifecycle["generation_completed"])
				assert.Zero(t, cov.Lifecycle["generation_failed_refunded"])
			}
		})
	}
}
