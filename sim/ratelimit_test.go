package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Requests counted by reads survive a kill -9 once flushed: the file as the
// dead process left it (copied while the engine is open, as a crash leaves
// it) holds the window.
func TestCountedReadsSurviveACrashOnceFlushed(t *testing.T) {
	dir := t.TempDir()
	e := newEngine(t, engineOpts{path: filepath.Join(dir, "state.db")})
	p := principal(t, e, "mk_test_free_plan")
	for i := 0; i < 12; i++ {
		require.True(t, e.Allow(p.WorkspaceID).Allowed)
	}
	require.NoError(t, e.FlushRates())
	data, err := os.ReadFile(filepath.Join(dir, "state.db"))
	require.NoError(t, err)
	crashed := filepath.Join(dir, "crashed.db")
	require.NoError(t, os.WriteFile(crashed, data, 0o600))

	again := newEngine(t, engineOpts{path: crashed})
	w := again.RateWindow(p.WorkspaceID)
	assert.Equal(t, w.Limit-12, w.Remaining, "the 12 counted requests are still counted")
}
