package store

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// The schema of the tests: the meta bucket, records rewritten in place,
// and an append-only log.
var (
	bRecords   = []byte("records")
	bLog       = []byte("log")
	testSchema = Schema{Version: "7", Buckets: [][]byte{Meta, bRecords, bLog}, AppendOnly: [][]byte{bLog}}
)

// openDB opens a state file of the test schema in t's folder, seeded empty
// (no bulk write yet: its Condition is New), and closes it at the end.
func openDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "state.db"), testSchema, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// seeded opens a state file and writes n records and n log entries by a
// bulk write of fingerprint "fp".
func seeded(t testing.TB, n int) *DB {
	t.Helper()
	db := openDB(t)
	b, err := db.BeginBulk(BulkOptions{What: "seed", Fingerprint: "fp", Batch: 50})
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, b.Tx().Bucket(bRecords).Put(u64(uint64(i)), []byte("record")))
		require.NoError(t, b.Step())
		require.NoError(t, b.Tx().Bucket(bLog).Put(u64(uint64(i)), []byte("entry")))
		require.NoError(t, b.Step())
	}
	require.NoError(t, b.End())
	return db
}

func u64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[7-i] = byte(v >> (8 * i))
	}
	return b
}

// count is how many records a bucket holds.
func count(t testing.TB, db *DB, bucket []byte) int {
	t.Helper()
	n := 0
	require.NoError(t, db.View(func(btx *bolt.Tx) error {
		n = btx.Bucket(bucket).Stats().KeyN
		return nil
	}))
	return n
}
