package store

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// A bulk write commits every Batch records, and ends with the marker gone
// and the schema and fingerprint written; the owner's transaction follows
// every one it begins.
func TestBulkInBoundedTransactions(t *testing.T) {
	db := seeded(t, 5) // a state to replace: wiped first
	var began []*bolt.Tx
	b, err := db.BeginBulk(BulkOptions{What: "reset", Fingerprint: "fp2", Batch: 10, Began: func(btx *bolt.Tx) { began = append(began, btx) }})
	require.NoError(t, err)
	assert.Equal(t, 0, b.Tx().Bucket(bRecords).Stats().KeyN, "wiped")
	for i := range 95 {
		require.Same(t, began[len(began)-1], b.Tx(), "the owner follows the open transaction")
		require.NoError(t, b.Tx().Bucket(bRecords).Put(u64(uint64(i)), []byte("x")))
		require.NoError(t, b.Step())
	}
	require.NoError(t, b.End())
	assert.Nil(t, began[len(began)-1], "told the bulk write ended")
	assert.Equal(t, BulkStats{Records: 95, Commits: 10}, db.LastBulk())
	assert.Equal(t, 95, count(t, db, bRecords))
	c, err := db.Condition("fp2")
	require.NoError(t, err)
	assert.Equal(t, Condition{}, c)
	require.NoError(t, db.View(func(btx *bolt.Tx) error {
		assert.Equal(t, "7", string(btx.Bucket(Meta).Get(KeySchema)))
		return nil
	}))
}

// Stop ends a bulk write at its next commit, the marker kept; what it
// committed stays.
func TestBulkStops(t *testing.T) {
	db := openDB(t)
	stop := make(chan struct{})
	b, err := db.BeginBulk(BulkOptions{What: "seed", Fingerprint: "fp", Batch: 4, Stop: stop})
	require.NoError(t, err)
	defer b.Abort()
	for i := range 3 {
		require.NoError(t, b.Tx().Bucket(bRecords).Put(u64(uint64(i)), nil))
		require.NoError(t, b.Step())
	}
	close(stop)
	require.NoError(t, b.Tx().Bucket(bRecords).Put(u64(3), nil))
	require.ErrorIs(t, b.Step(), ErrStopped)
	assert.Nil(t, b.Tx())
	c, err := db.Condition("fp")
	require.NoError(t, err)
	assert.Equal(t, "seed", c.Unfinished)
	assert.Equal(t, 4, count(t, db, bRecords), "the batch committed before the stop stays")
}

// Copy copies every bucket of a source, sequences included, in bounded
// transactions; the source's marker is not copied over the new one.
func TestBulkCopies(t *testing.T) {
	src := seeded(t, 30)
	require.NoError(t, src.Update(func(btx *bolt.Tx) error { return btx.Bucket(bLog).SetSequence(77) }))
	db := seeded(t, 3)
	b, err := db.BeginBulk(BulkOptions{What: "restore", Fingerprint: "fp", Batch: 16})
	require.NoError(t, err)
	require.NoError(t, src.View(b.Copy))
	require.NoError(t, b.End())
	assert.Equal(t, records(t, src), records(t, db))
	assert.Equal(t, 30, count(t, db, bLog))
	require.NoError(t, db.View(func(btx *bolt.Tx) error {
		assert.Equal(t, uint64(77), btx.Bucket(bLog).Sequence())
		return nil
	}))
	assert.Greater(t, db.LastBulk().Commits, 3)
	assert.False(t, db.Unfinished())
}

// A bulk write that takes more than a second reports its progress every
// few seconds, and once at the end; a quick one says nothing.
func TestBulkReportsProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		step time.Duration // of the wall clock, at each reading
		want []string
	}{
		{"slow", 400 * time.Millisecond, []string{
			`level=INFO msg="seed under way" records=\d+ per_second=\d+ elapsed=\S+ of=200 left=\S+`,
			`level=INFO msg="seed done" records=200 per_second=\d+ elapsed=\S+\n$`}},
		{"quick", time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			now := time.Unix(0, 0)
			db := openDB(t)
			b, err := db.BeginBulk(BulkOptions{What: "seed", Fingerprint: "fp", Total: 200, Batch: 20,
				Log: slog.New(slog.NewTextHandler(&logs, nil)), WallClock: func() time.Time { now = now.Add(tc.step); return now }})
			require.NoError(t, err)
			for i := range 200 {
				require.NoError(t, b.Tx().Bucket(bRecords).Put(u64(uint64(i)), nil))
				require.NoError(t, b.Step())
			}
			require.NoError(t, b.End())
			for _, re := range tc.want {
				assert.Regexp(t, re, logs.String())
			}
			if tc.want == nil {
				assert.Empty(t, logs.String())
			}
		})
	}
}
