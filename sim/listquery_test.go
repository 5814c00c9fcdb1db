package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// TestListAssetsAgreesWithAFullScan walks every combination of filters page
// by page and checks the ids against a scan of the whole library: the
// leapfrog over indexes, its step-back shortcut and the cursor must neither
// lose nor repeat an asset.
func TestListAssetsAgreesWithAFullScan(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_business")
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []string{KindImage, KindVideo, KindVoice, KindMusic}
	words := []string{"harbour", "lighthouse", "orchard", "glacier"}
	var all []Asset
	require.NoError(t, e.db.Update(func(btx *bolt.Tx) error {
		tx := e.newTx(btx)
		for range 600 {
			a := &Asset{WorkspaceID: p.WorkspaceID, Source: SourceGeneration, Kind: kinds[rng.IntN(len(kinds))], Status: StatusCompleted,
				Model: "imagen-4", Prompt: "a " + words[rng.IntN(len(words))], Credits: 6, MimeType: "image/png", CreatedAt: StampOf(tx.now)}
			if rng.IntN(5) == 0 {
				a.Status = StatusFailed
			}
			a.ProjectID = uint64(rng.IntN(4)) // 0: none
			if err := tx.insertAsset(a); err != nil {
				return err
			}
			all = append(all, *a)
		}
		return nil
	}))
	// The workspace's fixture assets are part of the library too.
	full, err := e.ListAssets(p, AssetQuery{Limit: 1 << 20})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(full.Data), len(all))

	for _, kind := range []string{"", KindImage, KindMusic} {
		for _, status := range []string{"", StatusCompleted, StatusFailed} {
			for _, project := range []uint64{0, 2} {
				for _, text := range []string{"", "lighthouse"} {
					q := AssetQuery{Kind: kind, Status: status, ProjectID: project, Query: text}
					var want []uint64
					for _, a := range full.Data {
						if (kind == "" || a.Kind == kind) && (status == "" || a.Status == status) &&
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
