package mediamock_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README a new user starts from: short, it says how to get a binary
// and how to run the tests, starts each audience in a few lines, leads to
// every page of the documentation's index, and its quick start needs no
// file the reader lacks and fails loudly.
func TestReadmeFirstHour(t *testing.T) {
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(data)
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 300, "the README is a landing page; topics go to docs/")
	for _, s := range []string{
		"go install github.com/mediamock/mediamock/cmd/mockserver@latest",
		"go build -o mockserver ./cmd/mockserver",
		"go run ./cmd/mockserver",
		"go test ./...",
	} {
		assert.Contains(t, readme, s)
	}

	// A quick start for each audience, each a few lines.
	for _, h := range []string{"### In a Go test", "### In TypeScript", "### In Python", "### In a container, in CI", "### For an agent, over MCP"} {
		i := strings.Index(readme, "\n"+h+"\n")
		if !assert.GreaterOrEqual(t, i, 0, "the README starts %q", h) {
			continue
		}
		section := readme[i+1:]
		section = section[:strings.Index(section[1:], "\n#")+1]
		assert.LessOrEqual(t, strings.Count(section, "\n"), 25, "%s is a few lines", h)
	}

	// Every page the documentation's index names is a link of the README.
	index, err := os.ReadFile("docs/README.md")
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`\]\(([a-z-]+/[a-z-]+\.md)\)`).FindAllStringSubmatch(string(index), -1) {
		assert.Contains(t, readme, "(docs/"+m[1], "the README links to docs/%s", m[1])
	}

	quick := readme[strings.Index(readme, "## Quick start"):strings.Index(readme, "### In a Go test")]
	assert.NotRegexp(t, `curl -s `, quick, "a silent curl hides errors: -sS --fail-with-body")
	assert.NotContains(t, quick, "@photo.jpg", "no file the reader does not have")
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.NotContains(t, string(data), "clientWithBearer", "%s: the Go MCP snippet calls only what it defines (example_mcp_test.go)", file)
		assert.NotContains(t, string(data), "@v0.1.0", "%s: no tag of that name exists", file)
	}
}
