package mediamock_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README a new user starts from: it says how to get a binary, lists
// its sections, and its quick start needs no file the reader lacks and
// fails loudly.
func TestReadmeFirstHour(t *testing.T) {
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(data)
	assert.Contains(t, readme, "go install github.com/mediamock/mediamock/cmd/mockserver@latest")
	assert.Contains(t, readme, "go build -o mockserver ./cmd/mockserver")

	// Every heading of the second level is in the contents, and every
	// entry leads to one.
	contents := readme[strings.Index(readme, "## Contents"):strings.Index(readme, "## Quick start")]
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if h, ok := strings.CutPrefix(line, "## "); ok && !inFence && h != "Contents" {
			anchor := regexp.MustCompile(`[^\w\- ]`).ReplaceAllString(strings.ToLower(h), "")
			anchor = strings.ReplaceAll(anchor, " ", "-")
			anchors[anchor] = true
			assert.Contains(t, contents, "(#"+anchor+")", "the contents list %q", h)
		}
	}
	for _, m := range regexp.MustCompile(`\(#([^)]+)\)`).FindAllStringSubmatch(contents, -1) {
		assert.True(t, anchors[m[1]], "the contents entry #%s leads to a heading", m[1])
	}

	quick := readme[strings.Index(readme, "## Quick start"):strings.Index(readme, "## Install")]
	assert.NotRegexp(t, `curl -s `, quick, "a silent curl hides errors: -sS --fail-with-body")
	assert.NotContains(t, quick, "@photo.jpg", "no file the reader does not have")
	assert.NotContains(t, readme, "clientWithBearer", "the Go MCP snippet calls only what it defines (example_mcp_test.go)")
	assert.NotContains(t, readme, "@v0.1.0", "no tag of that name exists")
}
