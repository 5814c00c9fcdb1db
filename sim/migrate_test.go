package sim

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
)

// The files these tests migrate are made by the versions of schemas 1
// (80e4a30) and 2 (2338932), built from git by scripts/migration-check,
// with testdata/migrate/make.sh: a state file, a snapshot, and the answers
// of schema 2's server (gzipped). The repository holds no database: the
// tests read them from $MEDIAMOCK_MIGRATION_DATA, and skip without it. Their fingerprint is of the fixture as
// that version read it: a change of the fixtures' shape since would read as
// other fixtures, which is not what these tests are about, so each test
// puts today's in a copy (withFingerprint).

// migrationWorld is the world of testdata/migrate/fixture.json.
func migrationWorld(tb testing.TB) *fixtures.World {
	tb.Helper()
	w, err := fixtures.Load("testdata/migrate/fixture.json", 0)
	require.NoError(tb, err)
	return w
}

// unpacked is the gzipped file of the migration data at name, unpacked.
func unpacked(tb testing.TB, name string) []byte {
	tb.Helper()
	f, err := os.Open(filepath.Join(migrationData(tb), name))
	require.NoError(tb, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(tb, err)
	data, err := io.ReadAll(z)
	require.NoError(tb, err)
	return data
}

// migrationData is the folder of the files of older schemas that
// scripts/migration-check makes; a test that needs them is skipped
// without it.
func migrationData(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("MEDIAMOCK_MIGRATION_DATA")
	if dir == "" {
		tb.Skip("the state files of schemas 1 and 2 are made by the servers of their day: run scripts/migration-check")
	}
	return dir
}

// withFingerprint is a copy of a state file that says it was seeded from
// w, at a path of its own.
func withFingerprint(tb testing.TB, data []byte, w *fixtures.World) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "state.db")
	require.NoError(tb, os.WriteFile(path, data, 0o600))
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(tb, err)
	require.NoError(tb, db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(store.Meta).Put(store.KeyFingerprint, []byte(StateFingerprint(w, 0)))
	}))
	require.NoError(tb, db.Close())
	return path
}

// oldLibrary is what a file of schema 1 or 2 holds of the library: every
// asset, and every list its four indexes gave, newest first.
type oldLibrary struct {
	version string
	assets  map[uint64]Asset
	newest  map[uint64]uint64 // per workspace
	lists   map[oldList][]uint64
	texts   map[uint64]map[uint64]string // per workspace, per asset
}

// oldList is one range of an old index: a kind's tag, a status's, or a
// project.
type oldList struct {
	ws    uint64
	class byte // 'k', 's' or 'p'
	value uint64
}

// readOldLibrary reads the library of a file of schema 1 or 2 as that
// schema laid it out.
func readOldLibrary(tb testing.TB, path string) oldLibrary {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	require.NoError(tb, err)
	defer db.Close()
	lib := oldLibrary{assets: map[uint64]Asset{}, newest: map[uint64]uint64{}, lists: map[oldList][]uint64{}, texts: map[uint64]map[uint64]string{}}
	require.NoError(tb, db.View(func(btx *bolt.Tx) error {
		lib.version = string(btx.Bucket(store.Meta).Get(store.KeySchema))
		require.NoError(tb, btx.Bucket(bAssets).ForEach(func(k, v []byte) error {
			a, _, err := oldAsset(k, v)
			require.NoError(tb, err)
			lib.assets[a.ID] = a
			lib.newest[a.WorkspaceID] = max(lib.newest[a.WorkspaceID], a.ID)
			return nil
		}))
		for _, idx := range []struct {
			name  string
			class byte
		}{{"idx_kind", 'k'}, {"idx_status", 's'}, {"idx_project", 'p'}} {
			require.NoError(tb, btx.Bucket([]byte(idx.name)).ForEach(func(k, _ []byte) error {
				l := oldList{ws: getU64(k), class: idx.class}
				if idx.class == 'p' {
					l.value = getU64(k[8:])
				} else {
					l.value = uint64(k[8])
				}
				lib.lists[l] = append([]uint64{getU64(k[len(k)-8:])}, lib.lists[l]...)
				return nil
			}))
		}
		return btx.Bucket([]byte("idx_text")).ForEach(func(k, v []byte) error {
			ws := getU64(k)
			if lib.texts[ws] == nil {
				lib.texts[ws] = map[uint64]string{}
			}
			lib.texts[ws][getU64(k[8:])] = string(v)
			return nil
		})
	}))
	require.NotEmpty(tb, lib.assets)
	return lib
}

// heldTo checks that e holds lib: every asset as it was, every list of the
// old indexes (and of a few text queries) listed alike, newest first, each
// workspace's index marked at its newest asset, the old buckets gone, and
// the file of schema 3.
func (lib oldLibrary) heldTo(t *testing.T, e *Engine) {
	t.Helper()
	for id, want := range lib.assets {
		got, err := e.AssetByID(id)
		require.NoError(t, err)
		require.Equal(t, want, got, "asset %d", id)
	}
	all := func(ws uint64, q AssetQuery) []uint64 {
		q.Limit = math.MaxInt32
		pg, err := e.ListAssets(Principal{WorkspaceID: ws}, q)
		require.NoError(t, err)
		ids := []uint64{}
		for _, a := range pg.Data {
			ids = append(ids, a.ID)
		}
		return ids
	}
	for l, want := range lib.lists {
		q := AssetQuery{}
		switch l.class {
		case 'k':
			q.Kind = kindOfTag[byte(l.value)]
		case 's':
			for status, tag := range statusTags {
				if uint64(tag) == l.value {
					q.Status = status
				}
			}
		case 'p':
			q.ProjectID = l.value
		}
		assert.Equal(t, want, all(l.ws, q), "%+v", q)
	}
	for ws, texts := range lib.texts {
		for _, needle := range []string{"lighthouse", "a", "héron", "morning", "nowhere"} {
			want := []uint64{}
			for id, text := range texts {
				if strings.Contains(text, needle) {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			slices.Reverse(want)
			assert.Equal(t, want, all(ws, AssetQuery{Query: needle}), "workspace %d, query %q", ws, needle)
		}
	}
	require.NoError(t, e.db.View(func(btx *bolt.Tx) error {
		assert.Equal(t, schemaVersion, string(btx.Bucket(store.Meta).Get(store.KeySchema)))
		for _, name := range retiredIndexes {
			assert.Nil(t, btx.Bucket(name), "%s", name)
		}
		for ws, newest := range lib.newest {
			assert.Equal(t, newest, indexedTo(btx.Bucket(bAssetIndex), ws), "the mark of workspace %d", ws)
		}
		return nil
	}))
}

// TestMigrateOlderStateFiles: a state file of schema 1 and of schema 2,
// each made by the version of its day, opens: every asset reads back as it
// was, every filter lists what the old indexes listed, and the file is of
// schema 3; then it serves (a creation, its list) and opens again as it is.
func TestMigrateOlderStateFiles(t *testing.T) {
	w := migrationWorld(t)
	for _, v := range []string{"1", "2"} {
		t.Run("schema "+v, func(t *testing.T) {
			path := withFingerprint(t, unpacked(t, "schema-v"+v+"/state.db.gz"), w)
			lib := readOldLibrary(t, path)
			require.Equal(t, v, lib.version)
			var logs bytes.Buffer
			e := newEngine(t, engineOpts{path: path, world: w, log: slog.New(slog.NewTextHandler(&logs, nil))})
			assert.Contains(t, logs.String(), "migrated the state file")
			lib.heldTo(t, e)
			p := principal(t, e, "mk_test_migrate")
			created, err := e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "after the migration"})
			require.NoError(t, err)
			pg, err := e.ListAssets(p, AssetQuery{Kind: KindImage, Limit: 1})
			require.NoError(t, err)
			require.Equal(t, created.Assets[0].ID, pg.Data[0].ID)
			require.NoError(t, e.Close())
			logs.Reset()
			e = newEngine(t, engineOpts{path: path, world: w, log: slog.New(slog.NewTextHandler(&logs, nil))})
			assert.NotContains(t, logs.String(), "migrat", "opened as it is")
			pg, err = e.ListAssets(p, AssetQuery{Kind: KindImage, Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []uint64{created.Assets[0].ID, lib.lists[oldList{p.WorkspaceID, 'k', uint64(kindTags[KindImage])}][0]}, []uint64{pg.Data[0].ID, pg.Data[1].ID})
		})
	}
}

// TestMigrateOlderSnapshots: a snapshot of schema 1 and of schema 2 is
// migrated when restored, and the state then holds what it held.
func TestMigrateOlderSnapshots(t *testing.T) {
	w := migrationWorld(t)
	for _, v := range []string{"1", "2"} {
		t.Run("schema "+v, func(t *testing.T) {
			path := withFingerprint(t, unpacked(t, "schema-v"+v+"/snapshot.db.gz"), w)
			lib := readOldLibrary(t, path)
			require.Equal(t, v, lib.version)
			snap, err := os.ReadFile(path)
			require.NoError(t, err)
			e := newEngine(t, engineOpts{world: w})
			require.NoError(t, e.Restore(bytes.NewReader(snap)))
			lib.heldTo(t, e)
			usable(t, e)
		})
	}
}

// TestMigrateRefusesWhatItCannotRead: a snapshot of schema 2 whose asset
// record is damaged is refused, and the state stays as it was.
func TestMigrateRefusesWhatItCannotRead(t *testing.T) {
	w := migrationWorld(t)
	e := newEngine(t, engineOpts{world: w})
	before := stateDigest(t, e)
	path := withFingerprint(t, unpacked(t, "schema-v2/snapshot.db.gz"), w)
	snap, err := os.ReadFile(path)
	require.NoError(t, err)
	for name, bad := range map[string][]byte{
		"damaged":        mutated(t, snap, put(bAssets, key(uint64(5), uint64(301)), []byte{1, 2})),
		"another's key":  mutated(t, snap, put(bAssets, key(uint64(5), uint64(999)), encodeAsset(&Asset{ID: 301, WorkspaceID: 5, Kind: KindImage, Status: StatusCompleted}))),
		"unknown kind":   mutated(t, snap, put(bAssets, key(uint64(5), uint64(999)), encodeAsset(&Asset{ID: 999, WorkspaceID: 5, Kind: "hologram", Status: StatusCompleted}))),
		"unknown status": mutated(t, snap, put(bAssets, key(uint64(5), uint64(999)), encodeAsset(&Asset{ID: 999, WorkspaceID: 5, Kind: KindImage, Status: "dreaming"}))),
	} {
		t.Run(name, func(t *testing.T) {
			err := e.Restore(bytes.NewReader(bad))
			var ee *Error
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, "invalid_snapshot", ee.Code)
			assert.Contains(t, ee.Message, "earlier version")
			assert.Equal(t, before, stateDigest(t, e))
		})
	}
}

// asSchema is a snapshot of schema 3 laid out as schema 2 had it (the four
// index buckets, every asset's entries), or as schema 1 (assets as JSON
// too): what a file of that version would hold, for the tests that need
// one of their own world.
func asSchema(tb testing.TB, snap []byte, version string) []byte {
	tb.Helper()
	return mutated(tb, snap, func(btx *bolt.Tx) error {
		idx := map[string]*bolt.Bucket{}
		for _, name := range retiredIndexes {
			b, err := btx.CreateBucket(name)
			if err != nil {
				return err
			}
			idx[string(name)] = b
		}
		assets := btx.Bucket(bAssets)
		var recoded [][2][]byte
		err := assets.ForEach(func(k, v []byte) error {
			var a Asset
			if err := decodeAsset(v, &a); err != nil {
				return err
			}
			ws := a.WorkspaceID
			for _, tag := range tagsOf(&a) {
				if err := idx["idx_kind"].Put(key(ws, tag, a.ID), nil); err != nil {
					return err
				}
			}
			if err := idx["idx_status"].Put(key(ws, statusTags[a.Status], a.ID), nil); err != nil {
				return err
			}
			if a.ProjectID != 0 {
				if err := idx["idx_project"].Put(key(ws, a.ProjectID, a.ID), nil); err != nil {
					return err
				}
			}
			if version == "1" {
				data, err := json.Marshal(&a)
				if err != nil {
					return err
				}
				recoded = append(recoded, [2][]byte{bytes.Clone(k), data})
			}
			return idx["idx_text"].Put(key(ws, a.ID), searchText(&a))
		})
		if err != nil {
			return err
		}
		for _, r := range recoded {
			if err := assets.Put(r[0], r[1]); err != nil {
				return err
			}
		}
		if err := btx.DeleteBucket(bAssetIndex); err != nil {
			return err
		}
		return btx.Bucket(store.Meta).Put(store.KeySchema, []byte(version))
	})
}

// TestMigrateLaysOutWhatSchema3Would: a library migrated from schema 2 or
// 1 (asSchema, of a state with fresh and indexed assets) lists every
// filter as the state it was made from.
func TestMigrateLaysOutWhatSchema3Would(t *testing.T) {
	e := newEngine(t, engineOpts{world: bigWorld(t, 500)})
	p := principal(t, e, "mk_test_big_library")
	_, err := e.GrantCredits(p.WorkspaceID, 1<<30, "migration test")
	require.NoError(t, err)
	for i := range 70 {
		_, err := e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: []string{"image", "video"}[i%2], ModelID: []string{"imagen-4", "veo-3-fast"}[i%2], Prompt: "migrated"})
		require.NoError(t, err)
	}
	snap := snapshotOf(t, e)
	queries := []AssetQuery{{}, {Kind: KindImage}, {Kind: KindVideo}, {Status: StatusQueued}, {Status: StatusCompleted}, {ProjectID: 3}, {Query: "migrated"}, {Kind: fixtures.KindAudio, Status: StatusCompleted}}
	lists := func(e *Engine) [][]uint64 {
		var out [][]uint64
		for _, q := range queries {
			q.Limit = math.MaxInt32
			pg, err := e.ListAssets(p, q)
			require.NoError(t, err)
			var ids []uint64
			for _, a := range pg.Data {
				ids = append(ids, a.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	want := lists(e)
	for _, v := range []string{"1", "2"} {
		t.Run("schema "+v, func(t *testing.T) {
			old := asSchema(t, snap, v)
			path := filepath.Join(t.TempDir(), "state.db")
			require.NoError(t, os.WriteFile(path, old, 0o600))
			m := newEngine(t, engineOpts{path: path, world: bigWorld(t, 500), batch: 37})
			assert.Equal(t, want, lists(m))
			before, after := stateDigest(t, e), stateDigest(t, m)
			delete(before, string(bAssetIndex))
			delete(after, string(bAssetIndex))
			assert.Equal(t, before, after, "the same records, the index aside")
		})
	}
}

// BenchmarkMigrate is a migration from schema 2 of a library of 10,000
// assets, per asset.
//
//	go test -run '^$' -bench Migrate ./sim/
func BenchmarkMigrate(b *testing.B) {
	w := bigWorld(b, 10_000)
	e := newEngine(b, engineOpts{world: w})
	old := asSchema(b, snapshotOf(b, e), "2")
	var assets int64
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		path := filepath.Join(dir, "state.db")
		require.NoError(b, os.WriteFile(path, old, 0o600))
		b.StartTimer()
		m, err := Open(Config{Path: path, World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil), onMigrate: func(n int64) { assets = n }})
		require.NoError(b, err)
		b.StopTimer()
		require.NoError(b, m.Close())
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*assets), "ns/asset")
}
