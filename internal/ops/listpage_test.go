package ops_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// A list page built from cached renderings is, byte for byte, the page
// encoding the list envelope would give, before and after the cache fills.
func TestCachedListPageIsTheEncodedEnvelope(t *testing.T) {
	srv := mediamock.RunT(t)
	get := func(query string) []byte {
		req, _ := http.NewRequest("GET", srv.BaseURL()+"/assets"+query, nil)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, 200, resp.StatusCode, "%s", b)
		return b
	}
	ws, _ := srv.WorkspaceID(mediamock.KeyAllScopes)
	for _, tt := range []struct {
		query string
		q     sim.AssetQuery
	}{
		{"?limit=5", sim.AssetQuery{Limit: 5}},
		{"?limit=50", sim.AssetQuery{Limit: 50}},
		{"?limit=3&status=completed&starting_after=40", sim.AssetQuery{Limit: 3, Status: "completed", StartingAfter: 40}},
		{"?kind=nope_none&limit=2", sim.AssetQuery{Limit: 2, Kind: "model3d", Query: "zzzz-no-match"}},
	} {
		if tt.query == "?kind=nope_none&limit=2" {
			tt.query = "?kind=model3d&query=zzzz-no-match&limit=2"
		}
		pg, err := srv.Engine().ListAssets(sim.Principal{WorkspaceID: ws}, tt.q)
		require.NoError(t, err)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(wire.Page(pg, wire.View{Base: srv.URL(), Eng: srv.Engine()}.Asset, func(a sim.Asset) uint64 { return a.ID })))
		first, second := get(tt.query), get(tt.query)
		assert.Equal(t, want.String(), string(first), tt.query)
		assert.Equal(t, want.String(), string(second), "%s from the cache", tt.query)
	}
}
