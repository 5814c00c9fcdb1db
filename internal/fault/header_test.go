package fault_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// A server whose control API is closed by a token ignores the header, and
// says so in its log.
func TestFaultHeaderIgnoredWhenControlsAreClosed(t *testing.T) {
	var log testkit.SyncBuffer
	srv := mediamock.RunT(t, mediamock.WithControlToken("secret"), mediamock.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	resp, err := get(t, freshClient(), srv.BaseURL()+"/account", "Mock-Fault", "reset")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, log.String(), "Mock-Fault header ignored")
}
