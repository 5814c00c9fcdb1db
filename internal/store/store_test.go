package store

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// A file tells what it holds: nothing yet, a bulk write that did not
// finish, a state of another schema or fingerprint, or a state to serve.
func TestCondition(t *testing.T) {
	db := openDB(t)
	c, err := db.Condition("fp")
	require.NoError(t, err)
	assert.Equal(t, Condition{New: true}, c)
	assert.True(t, db.Unfinished(), "a file never seeded holds no state to serve")

	b, err := db.BeginBulk(BulkOptions{What: "reset", Fingerprint: "fp", Batch: 2})
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, b.Tx().Bucket(bRecords).Put([]byte("k"), []byte("v")))
		require.NoError(t, b.Step())
	}
	b.Abort()
	c, err = db.Condition("fp")
	require.NoError(t, err)
	assert.Equal(t, Condition{Unfinished: "reset"}, c, "the first transaction's marker stays")
	assert.True(t, db.Unfinished())

	db = seeded(t, 3)
	c, err = db.Condition("fp")
	require.NoError(t, err)
	assert.Equal(t, Condition{}, c)
	assert.False(t, db.Unfinished())
	c, err = db.Condition("other")
	require.NoError(t, err)
	require.Error(t, c.Mismatch)
	assert.Contains(t, c.Mismatch.Error(), "was seeded from other fixtures or another seed: remove the file or reset it")

	require.NoError(t, db.Update(func(btx *bolt.Tx) error { return btx.Bucket(Meta).Put(KeySchema, []byte("6")) }))
	c, err = db.Condition("fp")
	require.NoError(t, err)
	require.Error(t, c.Mismatch)
	assert.Contains(t, c.Mismatch.Error(), `has state schema "6"; this version needs "7": remove the file or reset it`)
}

// A file of an earlier version, without a bucket the schema added, gets it
// empty; the others keep their records.
func TestAddMissingBuckets(t *testing.T) {
	db := seeded(t, 4)
	require.NoError(t, db.Update(func(btx *bolt.Tx) error { return btx.DeleteBucket(bLog) }))
	require.NoError(t, db.AddMissingBuckets())
	assert.Equal(t, 0, count(t, db, bLog))
	assert.Equal(t, 4, count(t, db, bRecords))
	require.NoError(t, db.AddMissingBuckets(), "nothing missing: nothing to do")
}

// A file another process holds is refused, not waited for.
func TestOpenRefusesAFileInUse(t *testing.T) {
	db := openDB(t)
	_, err := Open(db.Path(), testSchema, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the file is in use by another process")
	_, err = Open(filepath.Join(t.TempDir(), "no", "such", "dir", "state.db"), testSchema, Options{})
	assert.Error(t, err)
}

// The append-only buckets are known by their slice, not by their name.
func TestIsAppendOnly(t *testing.T) {
	assert.True(t, testSchema.IsAppendOnly(bLog))
	assert.False(t, testSchema.IsAppendOnly(bRecords))
	assert.False(t, testSchema.IsAppendOnly([]byte("log")), "another slice of the same name")
}
