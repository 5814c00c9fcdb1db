package refdoc

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestTypeScriptHelpersReference holds docs/reference/typescript-helpers.md
// to the npm package's TypeScript sources (TypeScriptHelpers). It needs
// node and the package's own typescript (npm ci in packages/npm/server,
// which scripts/release runs): without them it skips, unless
// MEDIAMOCK_REFDOC_REQUIRE=1 (scripts/packages-check, after its release).
func TestTypeScriptHelpersReference(t *testing.T) {
	_, errNode := exec.LookPath("node")
	_, errTS := os.Stat("../../packages/npm/server/node_modules/typescript/package.json")
	if errNode != nil || errTS != nil {
		if os.Getenv("MEDIAMOCK_REFDOC_REQUIRE") == "1" {
			t.Fatalf("node (%v) and packages/npm/server's typescript (%v) are needed (MEDIAMOCK_REFDOC_REQUIRE=1)", errNode, errTS)
		}
		t.Skip("needs node and packages/npm/server/node_modules (npm ci there, or scripts/release)")
	}
	page, err := TypeScriptHelpers("../../packages/npm/server")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	for _, want := range []string{
		"| `function useMediamock(options: UseMediamockOptions = {}): MediamockFixture` |",
		"| `async function startMediamock(options: MediamockOptions = {}): Promise<Mediamock>` |",
		"### ControlClient",
		"| `failNext(rule: FailRule = { count: 1 })` |",
		"| `baseURL: string` |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
