package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// An agent that connects with a sandbox's key is in the sandbox: its calls
// meet the sandbox's faults, land in the sandbox's journal and coverage,
// and leave every other workspace alone.
func TestMCPInASandbox(t *testing.T) {
	srv := mediamock.RunT(t)
	journaled := testkit.Watch(t, srv)
	sb := srv.Sandbox(t, func(s *mediamock.SandboxSpec) { s.Name = "agent run 7" })
	require.NoError(t, sb.ForceResponses("getAccount", 503, 1))

	in := connect(t, srv, sb.APIKey, latest)
	res := in.call("get_account", nil)
	assert.True(t, res.IsError)
	assert.Equal(t, "service_unavailable", res.Code(), "the sandbox's forced response")
	assert.Equal(t, "agent run 7", in.call("get_account", nil).ok().JSON["workspace_name"])

	out := connect(t, srv, mediamock.KeyAllScopes, sessioned)
	assert.Equal(t, "Acme Studio", out.call("get_account", nil).ok().JSON["workspace_name"], "another workspace never met it")

	var entries []mediamock.JournalEntry
	testkit.Await(t, journaled, "both calls in the sandbox's journal", func() bool {
		entries = sb.Journal(mediamock.JournalFilter{Operation: "getAccount"})
		return len(entries) == 2
	})
	for _, e := range entries {
		assert.Equal(t, "mcp", e.Front)
		assert.Equal(t, sb.ID, e.SandboxID)
	}
	for _, oc := range sb.Coverage().Operations {
		if oc.Operation == "getAccount" {
			assert.Equal(t, map[string]int{"mcp": 2}, oc.Fronts)
		}
	}
}
