package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
)

// stateDigest sums the whole state: one entry per bucket (its records and
// sequence), and one per meta key (the random signing key by its length).
func stateDigest(tb testing.TB, e *Engine) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := e.read(func(btx *bolt.Tx) error {
		return btx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if bytes.Equal(name, bMeta) {
				return b.ForEach(func(k, v []byte) error {
					if bytes.Equal(k, keySignKey) {
						out["meta/"+string(k)] = fmt.Sprintf("%d random bytes", len(v)) // a secret: random
						return nil
					}
					out["meta/"+string(k)] = hex.EncodeToString(v)
					return nil
				})
			}
			h := sha256.New()
			n := 0
			err := b.ForEach(func(k, v []byte) error {
				fmt.Fprintf(h, "%x=%x;", k, v)
				n++
				return nil
			})
			out[string(name)] = fmt.Sprintf("%d records, sequence %d, %x", n, b.Sequence(), h.Sum(nil)[:8])
			return err
		})
	})
	require.NoError(tb, err)
	return out
}

func TestSeedInBoundedTransactions(t *testing.T) {
	w := bigWorld(t, 3000)
	small := newEngine(t, engineOpts{world: w, batch: 97})
	assert.Greater(t, small.db.LastBulk().Commits, 30, "the seed is cut into many transactions")
	one := newEngine(t, engineOpts{world: w, batch: 1 << 30})
	assert.Equal(t, 1, one.db.LastBulk().Commits)
	assert.Equal(t, stateDigest(t, one), stateDigest(t, small), "the same records in the same order, however cut")
	checkSeeded(t, small, w)
}

// TestLargeLibraryMadeUpAsItIsSeeded: a library of LazyFrom assets or more
// is made up a chunk at a time as it is seeded, into the same state as
// the same library held whole.
func TestLargeLibraryMadeUpAsItIsSeeded(t *testing.T) {
	lazy := bigWorld(t, fixtures.LazyFrom+1500)
	ws := &lazy.Workspaces[len(lazy.Workspaces)-1]
	require.Equal(t, fixtures.LazyFrom+1500, ws.Assets.Len())
	require.Less(t, len(ws.Assets.Items), 10, "the library is not held")
	held := *lazy
	held.Workspaces = slices.Clone(lazy.Workspaces)
	var all []fixtures.LibraryAsset
	ws.Assets.Range(1000, func(_ int, items []fixtures.LibraryAsset) error {
		all = append(all, items...)
		return nil
	})
	held.Workspaces[len(held.Workspaces)-1].Assets = fixtures.Many[fixtures.LibraryAsset]{Items: all}
	e := newEngine(t, engineOpts{world: lazy, batch: 997})
	checkSeeded(t, e, lazy)
	assert.Equal(t, stateDigest(t, newEngine(t, engineOpts{world: &held})), stateDigest(t, e))
}

// checkSeeded checks, from the fixture alone, that every workspace, token,
// collection item, asset and index entry of w is in the state, and nothing
// more.
func checkSeeded(t *testing.T, e *Engine, w *fixtures.World) {
	t.Helper()
	want := map[string]int{}
	var assetID, projectID uint64
	err := e.read(func(btx *bolt.Tx) error {
		tx := e.newTx(btx)
		for wi, fw := range w.Workspaces {
			ws := uint64(wi + 1)
			_, err := tx.workspace(ws)
			require.NoError(t, err)
			want[string(bTokens)] += len(fw.APIKeys) + len(fw.OAuthTokens)
			want[string(bBrandKits)] += len(fw.BrandKits.Items)
			want[string(bCharacters)] += len(fw.Characters.Items)
			want[string(bSocial)] += len(fw.SocialAccounts.Items)
			want[string(bProjects)] += len(fw.Projects.Items)
			projects := map[string]uint64{}
			for _, p := range fw.Projects.Items {
				projectID++
				projects[p.Name] = projectID
				require.NotNil(t, btx.Bucket(bProjects).Get(key(ws, projectID)))
			}
			var library []fixtures.LibraryAsset
			fw.Assets.Range(fixtures.LazyFrom, func(_ int, items []fixtures.LibraryAsset) error {
				library = append(library, items...)
				return nil
			})
			for i, la := range library {
				assetID++
				a, err := tx.asset(ws, assetID)
				require.NoError(t, err, "workspace %d, asset %d", ws, i)
				require.Equal(t, la.Prompt, a.Prompt)
				require.Equal(t, la.Title, a.Title)
				require.Equal(t, projects[la.Project], a.ProjectID)
				if la.Kind == "upload" {
					require.Equal(t, SourceUpload, a.Source)
				} else {
					require.Equal(t, la.Kind, a.Kind)
				}
				require.Equal(t, u64(ws), btx.Bucket(bOwners).Get(key("a", assetID)))
				ix := btx.Bucket(bAssetIndex)
				for _, tag := range tagsOf(a) {
					require.NotNil(t, ix.Get(key(ws, byte(ixKind), tag, assetID)), "kind index of asset %d", assetID)
					want[string(bAssetIndex)]++
				}
				require.NotNil(t, ix.Get(key(ws, byte(ixStatus), statusTags[StatusCompleted], assetID)))
				if a.ProjectID != 0 {
					require.NotNil(t, ix.Get(key(ws, byte(ixProject), a.ProjectID, assetID)))
					want[string(bAssetIndex)]++
				}
				require.Equal(t, searchText(a), ix.Get(key(ws, byte(ixText), assetID)))
				want[string(bAssetIndex)] += 2 // status and text
			}
			if len(library) > 0 {
				assert.Equal(t, assetID, indexedTo(btx.Bucket(bAssetIndex), ws), "a seeded library is indexed whole")
				want[string(bAssetIndex)]++ // the mark
			}
		}
		want[string(bWorkspaces)] = len(w.Workspaces)
		want[string(bAssets)] = int(assetID)
		want[string(bOwners)] = int(assetID)
		for name, n := range want {
			assert.Equal(t, n, btx.Bucket([]byte(name)).Stats().KeyN, "records in %s", name)
		}
		return nil
	})
	require.NoError(t, err)
}

func TestInterruptedSeedIsRedone(t *testing.T) {
	w := bigWorld(t, 2000)
	for _, what := range []string{"seed", "reset", "restore"} {
		t.Run(what, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			e := newEngine(t, engineOpts{path: path, world: w, batch: 100})
			want := stateDigest(t, e)
			require.NoError(t, e.Close())

			// A bulk write cut short: the marker, and only part of the records.
			db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
			require.NoError(t, err)
			require.NoError(t, db.Update(func(btx *bolt.Tx) error {
				if err := btx.Bucket(bMeta).Put(store.KeyIncomplete, []byte(what)); err != nil {
					return err
				}
				for _, name := range [][]byte{bAssets, bAssetIndex} {
					c := btx.Bucket(name).Cursor()
					k, _ := c.Seek(u64(uint64(len(w.Workspaces))))
					for ; k != nil; k, _ = c.Next() {
						if err := c.Delete(); err != nil {
							return err
						}
					}
				}
				return nil
			}))
			require.NoError(t, db.Close())

			var logs bytes.Buffer
			e = newEngine(t, engineOpts{path: path, world: w, batch: 100, log: slog.New(slog.NewTextHandler(&logs, nil))})
			assert.Contains(t, logs.String(), "unfinished "+what)
			assert.Equal(t, want, stateDigest(t, e), "wiped and seeded again")
			checkSeeded(t, e, w)
		})
	}
}

// TestStoppedSeedLeavesItsMarker: Config.Stop stops a seed at its next
// commit; the file keeps the marker and the next Open seeds it again. A
// reset at run time does not listen.
func TestStoppedSeedLeavesItsMarker(t *testing.T) {
	w := bigWorld(t, 2000)
	path := filepath.Join(t.TempDir(), "state.db")
	stop := make(chan struct{})
	close(stop) // a SIGTERM before the first commit
	_, err := Open(Config{Path: path, World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil), batchSize: 100, Stop: stop})
	require.ErrorIs(t, err, ErrStopped)

	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.View(func(btx *bolt.Tx) error {
		assert.Equal(t, "seed", string(btx.Bucket(bMeta).Get(store.KeyIncomplete)), "the marker stays")
		assert.Less(t, btx.Bucket(bAssets).Stats().KeyN, 100, "stopped at the first commit, not at the end")
		return nil
	}))
	require.NoError(t, db.Close())

	var logs bytes.Buffer
	e := newEngine(t, engineOpts{path: path, world: w, batch: 100, log: slog.New(slog.NewTextHandler(&logs, nil))})
	assert.Contains(t, logs.String(), "unfinished seed")
	checkSeeded(t, e, w)
	require.NoError(t, e.Close())

	e, err = Open(Config{Path: path, World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil), batchSize: 100, Stop: stop})
	require.NoError(t, err, "a complete file is opened whatever Stop says")
	t.Cleanup(func() { e.Close() })
	require.NoError(t, e.Reset(DefaultEpoch), "a reset at run time goes to its end")
	checkSeeded(t, e, w)
}

func TestResetThatFailsHalfWayIsNotServed(t *testing.T) {
	w := bigWorld(t, 2000)
	path := filepath.Join(t.TempDir(), "state.db")
	e := newEngine(t, engineOpts{path: path, world: w, batch: 100})
	p := principal(t, e, "mk_test_big_library")

	// Fixtures broken under the engine make the next seed fail half-way.
	items := w.Workspaces[len(w.Workspaces)-1].Assets.Items
	i := 1500
	for items[i].Kind == "upload" {
		i++
	}
	model := items[i].Model
	items[i].Model = "no-such-model"
	err := e.Reset(DefaultEpoch)
	require.ErrorContains(t, err, "no-such-model")
	_, err = e.Account(p)
	assert.True(t, IsKind(err, EUNAVAILABLE), "a half-made state is not served: %v", err)
	_, err = e.GrantCredits(p.WorkspaceID, 1, "")
	assert.True(t, IsKind(err, EUNAVAILABLE), "nor written: %v", err)

	// A restart finds the marker and seeds again.
	require.NoError(t, e.Close())
	items[i].Model = model
	var logs bytes.Buffer
	e = newEngine(t, engineOpts{path: path, world: w, batch: 100, log: slog.New(slog.NewTextHandler(&logs, nil))})
	assert.Contains(t, logs.String(), "unfinished reset")
	_, err = e.Account(p)
	require.NoError(t, err)
	checkSeeded(t, e, w)

	// So does a reset that works.
	items[i].Model = "no-such-model"
	require.Error(t, e.Reset(DefaultEpoch))
	items[i].Model = model
	require.NoError(t, e.Reset(DefaultEpoch))
	_, err = e.Account(p)
	require.NoError(t, err)
	checkSeeded(t, e, w)
}

func TestReadsNeverSeeAHalfDoneReset(t *testing.T) {
	w := bigWorld(t, 3000)
	e := newEngine(t, engineOpts{world: w, batch: 50})
	p := principal(t, e, "mk_test_big_library")
	top := func() (uint64, error) {
		pg, err := e.ListAssets(p, AssetQuery{Limit: 1})
		if err != nil || len(pg.Data) == 0 {
			return 0, err
		}
		return pg.Data[0].ID, nil
	}
	seeded, err := top()
	require.NoError(t, err)
	_, err = e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "one more"})
	require.NoError(t, err)

	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				id, err := top()
				if err != nil || (id != seeded && id != seeded+1) {
					t.Errorf("a read during the reset saw the newest asset %d (err %v); want %d or %d", id, err, seeded, seeded+1)
					return
				}
				acc, err := e.Account(p)
				if err != nil || (acc.Balance != 1000 && acc.Balance != 994) {
					t.Errorf("a read during the reset saw a balance of %d (err %v)", acc.Balance, err)
					return
				}
			}
		}()
	}
	require.NoError(t, e.Reset(DefaultEpoch))
	assert.Greater(t, e.db.LastBulk().Commits, 50)
	close(done)
	wg.Wait()
	id, err := top()
	require.NoError(t, err)
	assert.Equal(t, seeded, id)
}

func TestSeedReportsProgress(t *testing.T) {
	var logs bytes.Buffer
	now := DefaultEpoch
	wall := func() time.Time { now = now.Add(400 * time.Millisecond); return now } // every batch takes 0.4 s
	w := bigWorld(t, 1000)
	_, err := Open(Config{Path: filepath.Join(t.TempDir(), "state.db"), World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil),
		Log: slog.New(slog.NewTextHandler(&logs, nil)), WallClock: wall, batchSize: 100})
	require.NoError(t, err)
	assert.Regexp(t, `level=INFO msg="seed under way" records=\d+ per_second=\d+ elapsed=\S+ of=1\d{3} left=\S+`, logs.String())
	assert.Regexp(t, `level=INFO msg="seed done" records=1\d{3} `, logs.String())
}
