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
	"github.com/mediamock/mediamock/internal/ops"
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

// The facts a list page carries beside its bytes (Result.List, which a
// tool result reads) are what the bytes say: the items' ids in order,
// has_more, and next_cursor the last id when more follow.
func TestListPageFactsAreThePage(t *testing.T) {
	srv := mediamock.RunT(t)
	list := ops.Handler("listAssets")
	var raw []byte
	var facts ops.ListFacts
	restore := ops.SwapHandler("listAssets", func(c *ops.Call) (int, any, error) {
		status, body, err := list(c)
		if err == nil {
			r, f, ok := ops.ListPageFacts(body)
			require.True(t, ok, "a list page without its facts")
			raw, facts = bytes.Clone(r), f // the page's buffer goes back to its pool once written
		}
		return status, body, err
	})
	defer restore()
	for _, query := range []string{"?limit=5", "?limit=50", "?limit=3&status=completed&starting_after=40",
		"?kind=model3d&query=zzzz-no-match&limit=2", "?limit=2&starting_after=2", "?limit=1&starting_after=1"} {
		req, _ := http.NewRequest("GET", srv.BaseURL()+"/assets"+query, nil)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, query)
		var page struct {
			Data       []struct{ ID uint64 }
			HasMore    bool    `json:"has_more"`
			NextCursor *uint64 `json:"next_cursor"`
		}
		require.NoError(t, json.Unmarshal(raw, &page), query)
		ids := []uint64{}
		for _, a := range page.Data {
			ids = append(ids, a.ID)
		}
		require.Equal(t, ids, append([]uint64{}, facts.IDs...), query)
		require.Equal(t, page.HasMore, facts.More, query)
		if facts.More && len(ids) > 0 {
			require.NotNil(t, page.NextCursor, query)
			require.Equal(t, ids[len(ids)-1], *page.NextCursor, query)
		} else {
			require.Nil(t, page.NextCursor, query)
		}
	}
}
