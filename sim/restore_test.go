package sim

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
)

// The bbolt file format, as far as these tests patch it (package store
// walks it: pagewalk.go): a page begins with a 16-byte header, whose flags
// say a leaf; integers are little-endian.
const (
	pageHeader = 16
	leafFlag   = 0x02
)

var le = binary.LittleEndian

func snapshotOf(tb testing.TB, e *Engine) []byte {
	tb.Helper()
	var buf bytes.Buffer
	_, err := e.Snapshot(&buf)
	require.NoError(tb, err)
	return buf.Bytes()
}

// mutated returns a copy of snap changed by fn through bbolt (a valid file
// with other records).
func mutated(tb testing.TB, snap []byte, fn func(*bolt.Tx) error) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "snap.db")
	require.NoError(tb, os.WriteFile(path, snap, 0o600))
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(tb, err)
	require.NoError(tb, db.Update(fn))
	require.NoError(tb, db.Close())
	out, err := os.ReadFile(path)
	require.NoError(tb, err)
	return out
}

// patched returns a copy of snap with b written at off.
func patched(snap []byte, off int, b ...byte) []byte {
	out := bytes.Clone(snap)
	copy(out[off:], b)
	return out
}

func put(bucket []byte, k, v []byte) func(*bolt.Tx) error {
	return func(btx *bolt.Tx) error { return btx.Bucket(bucket).Put(k, v) }
}

// usable checks that the engine still reads and writes.
func usable(tb testing.TB, e *Engine) {
	tb.Helper()
	ws, err := e.Workspaces()
	require.NoError(tb, err)
	require.NotEmpty(tb, ws)
	_, err = e.GrantCredits(ws[0].ID, 1, "still writes")
	require.NoError(tb, err)
}

func TestRestoreRefusesBadSnapshots(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	_, err := e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "in the snapshot"})
	require.NoError(t, err)
	snap := snapshotOf(t, e)
	root := int(le.Uint64(snap[pageHeader+16:])) // the root page, from meta page 0
	other := snapshotOf(t, newEngine(t, engineOpts{seed: 1}))
	require.Equal(t, uint16(leafFlag), le.Uint16(snap[root*4096+8:]), "the root page is a leaf")
	firstKey := root*4096 + pageHeader + int(le.Uint32(snap[root*4096+pageHeader+4:])) // of the first bucket

	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "not a state file", nil},
		{"text", "not a state file", []byte("not a state file")},
		{"cut in half", "cut short", snap[:len(snap)/2]},
		{"two pages", "cut short", snap[:2*4096]},
		{"meta checksum", "bad checksum", patched(snap, pageHeader+20, 0xff)},
		{"meta page size", "bad checksum", patched(snap, pageHeader+8, 0, 0x20)},
		{"root page header", "calls itself", patched(snap, root*4096, 0x99)},
		{"root page type", "has type", patched(snap, root*4096+8, 0x40)},
		{"root element count", "more elements", patched(snap, root*4096+10, 0xff, 0xff)},
		{"root element offset", "outside the page", patched(snap, root*4096+pageHeader+4, 0xff, 0xff, 0xff, 0x7f)},
		{"keys out of order", "out of order", patched(snap, firstKey, 'z')},
		{"other seed", "other fixtures", other},
		{"asset record", `bucket "assets", key 0000000000000001`, mutated(t, snap, put(bAssets, key(uint64(1), uint64(1)), []byte{7, 1, 2}))},
		{"token record", `bucket "tokens"`, mutated(t, snap, put(bTokens, []byte("mk_test_broken"), []byte("{")))},
		{"token of no workspace", "workspace 99 does not exist", mutated(t, snap, put(bTokens, []byte("mk_test_orphan"), []byte(`{"token":"mk_test_orphan","workspace_id":99}`)))},
		{"index to nowhere", "asset 99999 of workspace 1 does not exist", mutated(t, snap, put(bAssetIndex, key(uint64(1), byte(ixKind), byte(1), uint64(99999)), nil))},
		{"short owner", "a value of 1 bytes, want 8", mutated(t, snap, put(bOwners, key("a", uint64(1)), []byte{1}))},
		{"short due key", `bucket "due", key 01: a key of 1 bytes`, mutated(t, snap, put(bDue, []byte{1}, []byte(`{"kind":"job.finish"}`)))},
		{"due event", "unknown event kind", mutated(t, snap, put(bDue, key(uint64(1), uint64(1)), []byte(`{"kind":"explode"}`)))},
		{"rate window", `bucket "rate_windows"`, mutated(t, snap, put(bRate, u64(1), []byte("[]")))},
		{"half-done state", "had not finished", mutated(t, snap, put(bMeta, store.KeyIncomplete, []byte("reset")))},
		{"unknown bucket", `unknown bucket "extra"`, mutated(t, snap, func(btx *bolt.Tx) error { _, err := btx.CreateBucket([]byte("extra")); return err })},
		{"nested bucket", "nested bucket", mutated(t, snap, func(btx *bolt.Tx) error { _, err := btx.Bucket(bJobs).CreateBucket([]byte("x")); return err })},
		{"no meta", "no meta bucket", mutated(t, snap, func(btx *bolt.Tx) error { return btx.DeleteBucket(bMeta) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := stateDigest(t, e)
			now := e.Clock().Now()
			err := e.Restore(bytes.NewReader(tc.data))
			require.Error(t, err)
			var ee *Error
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, EINVALID, ee.Kind)
			assert.Equal(t, "invalid_snapshot", ee.Code)
			assert.Contains(t, ee.Message, tc.want)
			assert.Equal(t, before, stateDigest(t, e), "the state is untouched")
			assert.Equal(t, now, e.Clock().Now())
			usable(t, e)
		})
	}
}

func TestRestoreInBoundedTransactions(t *testing.T) {
	e := newEngine(t, engineOpts{world: bigWorld(t, 2000), batch: 100})
	p := principal(t, e, "mk_test_big_library")
	_, err := e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "in the snapshot"})
	require.NoError(t, err)
	want := stateDigest(t, e)
	snap := snapshotOf(t, e)
	wantClock := e.Clock().Now()

	_, err = e.Advance(time.Hour)
	require.NoError(t, err)
	_, err = e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "after the snapshot"})
	require.NoError(t, err)
	epoch := e.epoch.Load()

	require.NoError(t, e.Restore(bytes.NewReader(snap)))
	assert.Greater(t, e.db.LastBulk().Commits, 10)
	got := stateDigest(t, e)
	assert.Equal(t, hex.EncodeToString(u64(epoch+1)), got["meta/epoch"], "file addresses move on")
	delete(got, "meta/epoch")
	delete(want, "meta/epoch")
	assert.Equal(t, want, got)
	assert.Equal(t, wantClock, e.Clock().Now())
	pg, err := e.ListAssets(p, AssetQuery{Query: "snapshot", Limit: 10})
	require.NoError(t, err)
	assert.Len(t, pg.Data, 1)
	usable(t, e)
}

// tinyWorld is a world small enough for its snapshot to be a quick fuzz
// input (a few pages).
func tinyWorld(tb testing.TB) *fixtures.World {
	tb.Helper()
	w, err := fixtures.Parse("tiny.json", []byte(`{
		"models": [{"id": "img", "name": "Img", "modality": "image", "credits_per_output": 2, "options": {"aspect_ratios": ["1:1"], "resolutions": ["1k"]}}],
		"workspaces": [{"name": "Tiny", "plan": "pro", "credits": 100,
			"api_keys": [{"token": "mk_test_tiny_key", "scopes": ["read", "generate", "publish"]}],
			"projects": {"count": 1}, "social_accounts": {"count": 1}, "assets": {"count": 3}}]}`), 0)
	require.NoError(tb, err)
	return w
}

// FuzzRestore feeds Restore damaged snapshots: it must refuse them with an
// invalid_snapshot error and leave the state as it was, never panic or
// crash, and the engine must read and write afterwards.
//
//	go test -run XXX -fuzz FuzzRestore -fuzztime 60s -fuzzminimizetime 0 ./sim/
//
// (An input is a snapshot of tens of kilobytes: minimizing every new one,
// byte by byte, would take most of the run.)
func FuzzRestore(f *testing.F) {
	e := newEngine(f, engineOpts{world: tinyWorld(f)})
	p := principal(f, e, "mk_test_tiny_key")
	_, err := e.CreateGeneration(f.Context(), p, GenerationRequest{Modality: "image", ModelID: "img", Prompt: "fuzz"})
	require.NoError(f, err)
	// A record of every kind the check decodes, so that mutations reach
	// each decoder: an upload and its file, a publication and its due
	// delivery, a sandbox with its workspace and tokens, a token added.
	up, err := e.Upload(f.Context(), p, UploadInput{ImageURL: pngDataURI(f, 4, 4), Title: "fuzz"})
	require.NoError(f, err)
	_, err = e.CreatePublication(p, PublicationRequest{AssetIDs: []uint64{up.ID}, Caption: "fuzz", SocialAccountIDs: []uint64{1}})
	require.NoError(f, err)
	_, err = e.CreateSandbox(SandboxSpec{Name: "fuzz"}, 10)
	require.NoError(f, err)
	_, err = e.AddToken(p.WorkspaceID, TokenSpec{Type: "oauth", Scopes: []string{"read"}})
	require.NoError(f, err)
	snap := snapshotOf(f, e)
	root := int(le.Uint64(snap[pageHeader+16:]))
	f.Add(snap)
	f.Add(snap[:len(snap)/2])
	f.Add(snap[:len(snap)-4096])
	f.Add(patched(snap, root*4096+pageHeader+4, 0xff, 0xff))
	f.Add(patched(snap, root*4096+pageHeader+16+8, 0x30)) // a bucket's root page
	f.Add(mutated(f, snap, put(bAssets, key(uint64(1), uint64(1)), []byte{1, 1, 1})))
	f.Add(mutated(f, snap, put(bTokens, []byte("mk_test_fuzz_token"), []byte("{"))))
	f.Add(mutated(f, snap, put(bWorkspaces, u64(1), bytes.Repeat([]byte("x"), 5000))))
	// Snapshots of earlier schemas, migrated before their records are
	// checked: mutations reach the migration's decoders too.
	for _, v := range []string{"1", "2"} {
		old := asSchema(f, snap, v)
		f.Add(old)
		f.Add(mutated(f, old, put(bAssets, key(uint64(1), uint64(1)), []byte("{\"id\":1,\"ws\":1,\"kind\":7}"))))
		f.Add(mutated(f, old, put([]byte("idx_kind"), []byte("short"), nil)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := stateDigest(t, e)
		now := e.Clock().Now()
		if err := e.Restore(bytes.NewReader(data)); err != nil {
			var ee *Error
			require.ErrorAs(t, err, &ee)
			require.Equal(t, "invalid_snapshot", ee.Code, ee.Message)
			require.Equal(t, before, stateDigest(t, e), "a refused snapshot leaves the state as it was")
			require.Equal(t, now, e.Clock().Now())
		}
		usable(t, e)
	})
}
