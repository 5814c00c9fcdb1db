package oauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/internal/gate"
)

// Metadata names this server's endpoints under the root the client
// reached it at, and its resources.
func TestMetadata(t *testing.T) {
	r := newRig(t)
	meta := oauthAnswer(t, r.do("GET", ServerMetadataPath, nil, nil))
	assert.Equal(t, root, meta["issuer"])
	assert.Equal(t, root+TokenPath, meta["token_endpoint"])
	assert.Equal(t, []any{"S256"}, meta["code_challenge_methods_supported"])
	tests := []struct {
		path     string
		status   int
		resource string
	}{
		{ResourceMetadataPath + "/mcp", 200, root + "/mcp"},
		{ResourceMetadataPath + "/api/v1", 200, root + "/api/v1"},
		{ResourceMetadataPath, 200, root},
		{ResourceMetadataPath + "/files", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := r.do("GET", tt.path, nil, nil)
			assert.Equal(t, tt.status, rec.Code)
			out := oauthAnswer(t, rec)
			if tt.resource != "" {
				assert.Equal(t, tt.resource, out["resource"])
				assert.Equal(t, []any{root}, out["authorization_servers"])
			}
		})
	}
	assert.Equal(t, ResourceMetadataPath+"/mcp", strings.TrimPrefix(gate.ResourceMetadataURL(root, gate.ResourceMCP), root), "the address the MCP server's 401s point at is the one served here")
	assert.Equal(t, http.StatusNotFound, r.do("GET", "/oauth/nope", nil, nil).Code)
}
