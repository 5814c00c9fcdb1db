package ops_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pipeline knows no transport: package ops imports no front, neither
// directly nor through another package (its environment is its own, the
// spec's header spellings are wire's, the bearer challenge is gate's).
func TestOpsImportsNoFront(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/mediamock/mediamock/internal/contract")
	for _, front := range []string{"front", "rest", "mcp", "control", "dashboard", "oauth", "router", "proxy"} {
		assert.NotContains(t, deps, "github.com/mediamock/mediamock/internal/"+front, "ops imports the %s front", front)
	}
}
