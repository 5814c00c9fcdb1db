package mediamock_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// gradedT is a test that records what AssertGoodClient reports.
type gradedT struct {
	*testing.T
	errors []string
}

func (g *gradedT) Errorf(format string, args ...any) {
	g.errors = append(g.errors, fmt.Sprintf(format, args...))
}

// TestAssertGoodClient: a sandbox's report holds its own requests; the
// assertion fails on warnings and errors by default, on what it is told
// otherwise, and says how to fix the client.
func TestAssertGoodClient(t *testing.T) {
	srv := mediamock.RunT(t)
	sb := srv.Sandbox(t)
	for range 2 {
		status, _, _ := testkit.REST(t, srv, sb.APIKey, "GET", "/generations/999999", nil)
		require.Equal(t, http.StatusNotFound, status)
	}
	r, err := sb.Report()
	require.NoError(t, err)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "poll-unknown-id", r.Findings[0].ID)
	assert.Equal(t, 2, r.Findings[0].Count)
	assert.Equal(t, "sandbox "+sb.ID, r.Scope)

	g := &gradedT{T: t}
	sb.AssertGoodClient(g)
	require.Len(t, g.errors, 1)
	assert.Contains(t, g.errors[0], "poll-unknown-id (2)")
	assert.Contains(t, g.errors[0], "Fix: Poll the ids the creation answered with")

	g = &gradedT{T: t}
	sb.AssertGoodClient(g, "error")
	assert.Empty(t, g.errors, "no error-level finding")

	other := srv.Sandbox(t)
	g = &gradedT{T: t}
	other.AssertGoodClient(g)
	assert.Empty(t, g.errors, "another sandbox's report is its own")

	_, err = srv.Report("sluggish")
	assert.ErrorContains(t, err, `"sluggish" is neither a finding id nor a severity`)
}
