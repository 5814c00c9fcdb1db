package oauth

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The protected resources are the MCP server, the REST API and the whole
// service, on this server's own root only.
func TestResourceAllowed(t *testing.T) {
	tests := []struct {
		resource string
		want     bool
	}{
		{root + "/mcp", true},
		{root + "/mcp/", true},
		{root + "/api/v1", true},
		{root, true},
		{root + "/", true},
		{root + "/api/v2", false},
		{"https://other.example/mcp", false},
		{"http://localhost:1/mcp", false},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) { assert.Equal(t, tt.want, resourceAllowed(root, tt.resource)) })
	}
}
