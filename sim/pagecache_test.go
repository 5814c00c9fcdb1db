package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeptPagesFollowEveryWrite: a page whose assets the caller all has is
// kept until the next write; a creation, a finished job, a reset (any
// write) shows at once, and a page with an asset the caller lacks is read
// again.
func TestKeptPagesFollowEveryWrite(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	q := AssetQuery{Limit: 5}
	have := map[uint64]bool{}
	all := func(id uint64) bool { return have[id] }
	list := func() []uint64 {
		t.Helper()
		ids, assets, _, err := e.ListAssetsSkipping(p, q, all)
		require.NoError(t, err)
		for i, id := range ids {
			if assets != nil && assets[i].ID != 0 {
				have[id] = true // the caller renders it, and has it from now on
			}
		}
		return ids
	}
	first := list()
	require.NotEmpty(t, first)
	require.Equal(t, first, list(), "read again once the caller has them all")
	reads := e.db.Commits()
	require.Equal(t, first, list())
	require.Equal(t, reads, e.db.Commits(), "a kept page is read without a write")

	created, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a page cache"})
	require.NoError(t, err)
	after := list()
	require.Equal(t, created.Assets[0].ID, after[0], "a creation is on the next page at once")

	// The caller forgets an asset: the page is read again, with it.
	delete(have, after[1])
	ids, assets, _, err := e.ListAssetsSkipping(p, q, all)
	require.NoError(t, err)
	require.Equal(t, after, ids)
	require.NotNil(t, assets)
	require.Equal(t, after[1], assets[1].ID)

	// Another query, another page.
	q2 := AssetQuery{Limit: 2}
	ids2, _, _, err := e.ListAssetsSkipping(p, q2, all)
	require.NoError(t, err)
	require.Equal(t, after[:2], ids2)
}
