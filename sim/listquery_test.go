package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// TestListAssetsAgreesWithAFullScan walks every combination of filters page
// by page and checks the ids against a scan of the whole library: the
// leapfrog over indexes, its step-back shortcut, the fresh assets read from
// their records (index.go) and the cursor must neither lose nor repeat an
// asset. It does so with the assets inserted fresh, then indexed, then with
// statuses moved and fresh assets on top of indexed ones.
func TestListAssetsAgreesWithAFullScan(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_business")
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []string{KindImage, KindVideo, KindVoice, KindMusic}
	words := []string{"harbour", "lighthouse", "orchard", "glacier", "LIGHTHOUSE", "Lighthöuse"}
	var all []Asset
	insert := func(tx *tx, n int) error {
		for range n {
			a := &Asset{WorkspaceID: p.WorkspaceID, Source: SourceGeneration, Kind: kinds[rng.IntN(len(kinds))], Status: StatusCompleted,
				Model: "imagen-4", Prompt: "a " + words[rng.IntN(len(words))], Credits: 6, MimeType: "image/png", CreatedAt: StampOf(tx.now)}
			switch rng.IntN(5) {
			case 0:
				a.Status = StatusFailed
			case 1:
				a.Source, a.Kind, a.Title = SourceUpload, KindImage, "An Uploaded "+words[rng.IntN(len(words))]
			}
			a.ProjectID = uint64(rng.IntN(4)) // 0: none
			if err := tx.insertAsset(a); err != nil {
				return err
			}
			all = append(all, *a)
		}
		return nil
	}
	// Fresh: inserted without the transaction's end, which would index them.
	require.NoError(t, e.db.Update(func(btx *bolt.Tx) error { return insert(e.newTx(btx), 600) }))
	t.Run("fresh", func(t *testing.T) { agreesWithAFullScan(t, e, p, len(all)) })
	require.NoError(t, e.update(func(tx *tx) error { return insert(tx, 1) }))
	require.NoError(t, e.view(func(tx *tx) error {
		require.Equal(t, all[len(all)-1].ID, indexedTo(tx.b(bAssetIndex), p.WorkspaceID), "a write's end indexed them")
		return nil
	}))
	t.Run("indexed", func(t *testing.T) { agreesWithAFullScan(t, e, p, len(all)) })
	require.NoError(t, e.db.Update(func(btx *bolt.Tx) error {
		tx := e.newTx(btx)
		if err := insert(tx, indexLag-1); err != nil {
			return err
		}
		for i := range all {
			if rng.IntN(4) > 0 {
				continue
			}
			a, err := tx.asset(p.WorkspaceID, all[i].ID)
			if err != nil {
				return err
			}
			old := a.Status
			a.Status = []string{StatusQueued, StatusProcessing, StatusCompleted, StatusFailed}[rng.IntN(4)]
			if err := tx.updateAsset(a, old); err != nil {
				return err
			}
		}
		return tx.indexFresh()
	}))
	require.NoError(t, e.view(func(tx *tx) error {
		require.Less(t, indexedTo(tx.b(bAssetIndex), p.WorkspaceID), all[len(all)-1].ID, "fewer than indexLag fresh assets wait")
		return nil
	}))
	t.Run("moved", func(t *testing.T) { agreesWithAFullScan(t, e, p, len(all)) })
}

// agreesWithAFullScan checks every combination of filters against a scan
// of the library of at least n assets.
func agreesWithAFullScan(t *testing.T, e *Engine, p Principal, n int) {
	// The workspace's fixture assets are part of the library too.
	full, err := e.ListAssets(p, AssetQuery{Limit: 1 << 20})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(full.Data), n)

	for _, kind := range []string{"", KindImage, KindMusic, fixtures.KindAudio, fixtures.KindUpload} {
		for _, status := range []string{"", StatusCompleted, StatusFailed, StatusQueued} {
			for _, project := range []uint64{0, 2} {
				for _, text := range []string{"", "lighthouse"} {
					q := AssetQuery{Kind: kind, Status: status, ProjectID: project, Query: text}
					var want []uint64
					for _, a := range full.Data {
						if (kind == "" || slices.Contains(tagsOf(&a), kindTags[kind])) && (status == "" || a.Status == status) &&
							(project == 0 || a.ProjectID == project) && (text == "" || strings.Contains(strings.ToLower(a.Title+" "+a.Prompt), text)) {
							want = append(want, a.ID)
						}
					}
					for _, limit := range []int{1, 7, 100} {
						t.Run(fmt.Sprintf("%+v/limit=%d", q, limit), func(t *testing.T) {
							q := q
							var got []uint64
							for page := 0; ; page++ {
								q.Limit = limit
								pg, err := e.ListAssets(p, q)
								require.NoError(t, err)
								for _, a := range pg.Data {
									got = append(got, a.ID)
								}
								if !pg.HasMore {
									break
								}
								require.NotEmpty(t, pg.Data)
								q.StartingAfter = pg.Data[len(pg.Data)-1].ID
								require.Less(t, page, 1000, "the pages do not end")
							}
							require.Equal(t, want, got)
							require.True(t, slices.IsSortedFunc(got, func(a, b uint64) int { return int(b) - int(a) }))
						})
					}
				}
			}
		}
	}
}
