package edge_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// The in-memory transport hands a client canonical names, as net/http
// parses them off the wire.
func TestMemoryTransportHeadersReadAsUsual(t *testing.T) {
	srv, err := mediamock.New(mediamock.Options{NoListener: true})
	require.NoError(t, err)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "120", resp.Header.Get("X-RateLimit-Limit"))
	assert.NotEmpty(t, resp.Header.Get("X-Request-Id"))
}
