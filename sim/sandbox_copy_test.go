package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

const bigLibrary = "Big Library"

// A library copied in batches makes the same state, byte for byte, as
// one copied in one write, and a reset gives the sandbox the same records
// again.
func TestSandboxCopyInBatchesIsTheSameCopy(t *testing.T) {
	w := bigWorld(t, 2500)
	batched := newEngine(t, engineOpts{world: w, copy: 256})
	whole := newEngine(t, engineOpts{world: w, copy: 1 << 30})
	var batches int
	batched.onCopyBatch = func(done, total int) { batches++ }
	for _, e := range []*Engine{batched, whole} {
		newSandbox(t, e, SandboxSpec{From: bigLibrary})
	}
	assert.Equal(t, 11, batches, "the first write and 10 of 256 assets")
	want := unsecret(whole, records(t, whole, 0))
	sameRecords(t, want, unsecret(batched, records(t, batched, 0)))
	assert.Len(t, want[string(bAssets)], 2500+len(records(t, newEngine(t, engineOpts{world: w}), 0)[string(bAssets)]),
		"the sandbox's copy of the library")

	// A reset and a delete of a busy sandbox, its library in batches: the
	// same state as in one write.
	for _, e := range []*Engine{batched, whole} {
		sb := e.Sandboxes()[0]
		busy(t, e, sandboxKey(t, e, sb))
		_, err := e.ResetSandbox(sb.ID)
		require.NoError(t, err)
	}
	sameRecords(t, unsecret(whole, records(t, whole, 0)), unsecret(batched, records(t, batched, 0)), "a reset gives the copied records their ids again")
	for _, e := range []*Engine{batched, whole} {
		sb := e.Sandboxes()[0]
		busy(t, e, sandboxKey(t, e, sb))
		require.NoError(t, e.DeleteSandbox(sb.ID))
	}
	after := records(t, batched, 0)
	sameRecords(t, unsecret(whole, records(t, whole, 0)), unsecret(batched, after), "a delete leaves the same")
	assert.Len(t, after[string(bAssets)], len(records(t, newEngine(t, engineOpts{world: w}), 0)[string(bAssets)]))
}

// Other workspaces' writes go in between the batches of a copy: a write
// made between two batches is done, and read back, while the copy has not
// finished, and nothing of the sandbox is seen before it has.
func TestSandboxCopyLetsOtherWritesIn(t *testing.T) {
	e := newEngine(t, engineOpts{world: bigWorld(t, 1000), copy: 256})
	acme := principal(t, e, tokAcme)
	workspaces, err := e.Workspaces()
	require.NoError(t, err)
	var between Asset
	var seen []int
	e.onCopyBatch = func(done, total int) {
		seen = append(seen, done)
		if done != 512 {
			return
		}
		between = upload(t, e, acme, 64, 64, "between two batches")
		got, err := e.AssetByID(between.ID)
		require.NoError(t, err)
		assert.Equal(t, "between two batches", got.Title)
		assert.Equal(t, acme.WorkspaceID, got.WorkspaceID)
		assert.Empty(t, e.Sandboxes(), "no sandbox before its library is copied")
		now, err := e.Workspaces()
		require.NoError(t, err)
		assert.Len(t, now, len(workspaces), "nor its workspace")
	}
	sb := newSandbox(t, e, SandboxSpec{From: bigLibrary})
	assert.Equal(t, []int{0, 256, 512, 768, 1000}, seen)
	require.NotZero(t, between.ID)

	p := sandboxKey(t, e, sb)
	pg, err := e.ListAssets(p, AssetQuery{Limit: 100})
	require.NoError(t, err)
	require.Len(t, pg.Data, 100)
	assert.True(t, pg.HasMore)
	newest := pg.Data[0].ID
	assert.Less(t, newest, between.ID, "the library's ids were reserved before the write between")
	got, err := e.AssetByID(between.ID)
	require.NoError(t, err)
	assert.Equal(t, acme.WorkspaceID, got.WorkspaceID, "the write between stays Acme's")
}

// A library larger than the limit is refused with a clear error, before
// anything is written; the same sandbox with an empty library is made.
func TestSandboxCopyRefusesTooLargeALibrary(t *testing.T) {
	e := newEngine(t, engineOpts{world: bigWorld(t, 600), copy: 128, limit: 500})
	before := records(t, e, 0)
	_, err := e.CreateSandbox(SandboxSpec{From: bigLibrary}, 0)
	var se *Error
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, ECONFLICT, se.Kind)
	assert.Equal(t, "library_too_large", se.Code)
	assert.Contains(t, se.Message, "empty_library")
	assert.Equal(t, map[string]any{"limit": 500, "assets": 600, "from": bigLibrary}, se.Details)
	sameRecords(t, before, records(t, e, 0))
	newSandbox(t, e, SandboxSpec{From: bigLibrary, EmptyLibrary: true})
}

// A copy cut short by a stop leaves its marker: the next Open removes its
// records. A copy whose state a reset replaced fails and leaves nothing.
func TestSandboxCopyCutShort(t *testing.T) {
	w := bigWorld(t, 700)
	path := t.TempDir() + "/state.db"
	e := newEngine(t, engineOpts{world: w, copy: 128, path: path})
	before := records(t, e, 0)
	fw, _, err := e.sandboxWorkspace(SandboxSpec{From: bigLibrary})
	require.NoError(t, err)
	c, err := e.copyLibrary(fw) // never adopted: as if the process stopped here
	require.NoError(t, err)
	assert.Len(t, records(t, e, 0)[string(bAssets)], len(before[string(bAssets)])+700)
	require.NoError(t, e.Close())

	e = newEngine(t, engineOpts{world: w, copy: 128, path: path})
	sameRecords(t, before, records(t, e, 0), "the unfinished copy removed at Open")
	require.NoError(t, e.db.View(func(btx *bolt.Tx) error {
		assert.Nil(t, btx.Bucket(bMeta).Get(copyMarker(c.ws)))
		return nil
	}))

	// A reset of the whole state between two batches.
	e.onCopyBatch = func(done, total int) {
		if done == 256 {
			require.NoError(t, e.Reset(DefaultEpoch))
		}
	}
	_, err = e.CreateSandbox(SandboxSpec{From: bigLibrary}, 0)
	var se *Error
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, "state_replaced", se.Code)
	e.onCopyBatch = nil
	after := records(t, e, 0)
	delete(after[string(bMeta)], fmt.Sprintf("%x", "epoch")) // a reset's mark
	sameRecords(t, before, after, "the reset's state, nothing of the copy")
	newSandbox(t, e, SandboxSpec{From: bigLibrary})
}

// unsecret puts placeholders in place of an engine's random secrets (its
// sandboxes' control tokens and keys, its file signature key) in a dump
// of its records: two engines mint different ones, and the rest of their
// states must be the same.
func unsecret(e *Engine, dump map[string]map[string]string) map[string]map[string]string {
	var secrets []string
	for _, sb := range e.Sandboxes() {
		secrets = append(secrets, sb.ControlToken)
		for _, tok := range sb.Tokens {
			secrets = append(secrets, tok.Token)
		}
	}
	out := map[string]map[string]string{}
	for b, m := range dump {
		out[b] = map[string]string{}
		for k, v := range m {
			if b == string(bMeta) && k == fmt.Sprintf("%x", keySignKey) {
				continue
			}
			for n, secret := range secrets {
				mark := fmt.Sprintf("<secret %d>", n)
				v = strings.ReplaceAll(v, secret, mark)
				k = strings.ReplaceAll(k, fmt.Sprintf("%x", secret), fmt.Sprintf("%x", mark))
			}
			out[b][k] = v
		}
	}
	return out
}

// sameRecords compares two dumps of records, naming the keys that differ
// rather than printing the dumps.
func sameRecords(t *testing.T, want, got map[string]map[string]string, msg ...any) {
	t.Helper()
	var diff []string
	for b, m := range want {
		for k, v := range m {
			if g, ok := got[b][k]; !ok {
				diff = append(diff, "missing "+b+"/"+k)
			} else if g != v {
				diff = append(diff, "changed "+b+"/"+k)
			}
		}
		for k := range got[b] {
			if _, ok := m[k]; !ok {
				diff = append(diff, "extra "+b+"/"+k)
			}
		}
	}
	if len(diff) > 10 {
		diff = append(diff[:10], fmt.Sprintf("... %d more", len(diff)-10))
	}
	assert.Empty(t, diff, msg...)
}
