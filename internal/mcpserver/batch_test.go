package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/mcpserver"
)

// TestHTTPBatchRefusedAsJSONRPC: over HTTP, a batch on a revision that
// has none (2025-06-18 and later, in a session and sessionless) is
// answered 400 with JSON-RPC's -32600 and "id": null, as over stdio, and
// a session goes on; an earlier revision answers the batch.
func TestHTTPBatchRefusedAsJSONRPC(t *testing.T) {
	hs := httptest.NewServer(front(toy(t, mcpserver.Options{})))
	defer hs.Close()
	header := func(version, session string) http.Header {
		h := http.Header{"Authorization": {"Bearer ada"}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {version}}
		if session != "" {
			h.Set("Mcp-Session-Id", session)
		}
		return h
	}
	refused := func(t *testing.T, a answer) {
		t.Helper()
		assert.Equal(t, http.StatusBadRequest, a.StatusCode, a.body)
		assert.Equal(t, "application/json", a.Header.Get("Content-Type"))
		var got struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(a.body), &got), a.body)
		assert.Equal(t, "2.0", got.JSONRPC)
		assert.Equal(t, "null", string(got.ID))
		assert.Equal(t, -32600, got.Error.Code)
		assert.Contains(t, got.Error.Message, "batching is not supported")
	}
	batch := `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			init := post(t, hs.URL, header(version, ""), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			id := init.Header.Get("Mcp-Session-Id")
			require.NotEmpty(t, id)
			post(t, hs.URL, header(version, id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			a := post(t, hs.URL, header(version, id), batch)
			if version < "2025-06-18" {
				assert.Equal(t, http.StatusOK, a.StatusCode, a.body)
				assert.Contains(t, a.body, `"id":2,"result":{}`)
				assert.Contains(t, a.body, `"id":3,"result":{}`)
				return
			}
			refused(t, a)
			after := post(t, hs.URL, header(version, id), `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
			assert.Equal(t, http.StatusOK, after.StatusCode)
			assert.Contains(t, after.body, `"id":4,"result":{}`)
		})
	}
	t.Run("2026-07-28", func(t *testing.T) {
		h := header("2026-07-28", "")
		h.Set("Mcp-Method", "ping")
		refused(t, post(t, hs.URL, h, batch))
	})
}
