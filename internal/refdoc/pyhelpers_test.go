package refdoc

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPythonHelpersReference holds docs/reference/python-helpers.md to the
// Python package's source and docstrings (PythonHelpers).
func TestPythonHelpersReference(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 reads the Python package's source: not installed")
	}
	page, err := PythonHelpers("../../packages/python/mediamock")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	// A signature with its types (from a type comment), a method, a
	// fixture with its scope, a typed dictionary's key, an attribute.
	for _, want := range []string{
		"`start_mediamock(port: Optional[int] = None, clock: str = 'real',",
		"| `.sandbox(spec: Optional[SandboxSpec] = None, **fields: Any) -> MediamockSandbox` |",
		"| `mediamock_server` | session |",
		"| `count: int` |",
		"| `.base_url: str` |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
