package mediamock_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server.json is the MCP Registry's entry for the MCP server (schema
// checked in scripts/packages-check against the registry's own). The
// registry verifies each package by the name it carries, so the npm
// package's mcpName, the Python package's README marker and the image's
// label must all be the entry's name, and every version the repository's.
func TestMCPRegistryEntry(t *testing.T) {
	var entry struct {
		Schema   string `json:"$schema"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Packages []struct {
			RegistryType, Identifier, Version string
			Transport                         struct{ Type string }
			PackageArguments                  []struct{ Type, Value string }
		} `json:"packages"`
	}
	data, err := os.ReadFile("server.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &entry))
	version, err := os.ReadFile("VERSION")
	require.NoError(t, err)
	v := strings.TrimSpace(string(version))
	assert.Equal(t, "io.github.mediamock/mediamock", entry.Name)
	assert.Equal(t, v, entry.Version)
	assert.Contains(t, entry.Schema, "static.modelcontextprotocol.io/schemas/")

	var pkg struct{ Name, MCPName string }
	data, err = os.ReadFile("packages/npm/server/package.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pkg))
	readme, err := os.ReadFile("packages/python/README.md")
	require.NoError(t, err)
	dockerfile, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	assert.Equal(t, entry.Name, pkg.MCPName, "the npm package's mcpName")
	assert.Contains(t, string(readme), "mcp-name: "+entry.Name, "the Python package's README marker")
	assert.Contains(t, string(dockerfile), `io.modelcontextprotocol.server.name="`+entry.Name+`"`, "the image's label")

	types := map[string]string{}
	for _, p := range entry.Packages {
		types[p.RegistryType] = p.Identifier
		assert.Equal(t, "stdio", p.Transport.Type, p.RegistryType)
		require.NotEmpty(t, p.PackageArguments, p.RegistryType)
		assert.Equal(t, "mcp", p.PackageArguments[0].Value, "%s: the package runs mockserver mcp", p.RegistryType)
		if p.RegistryType == "oci" {
			assert.Equal(t, "ghcr.io/mediamock/mediamock:"+v, p.Identifier)
		} else {
			assert.Equal(t, v, p.Version, p.RegistryType)
		}
	}
	assert.Equal(t, map[string]string{"npm": pkg.Name, "pypi": "mediamock", "oci": "ghcr.io/mediamock/mediamock:" + v}, types)
}
