package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// records reads every record of bRecords, in key order.
func records(t testing.TB, db *DB) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.View(func(btx *bolt.Tx) error {
		return btx.Bucket(bRecords).ForEach(func(k, v []byte) error {
			out = append(out, string(k)+"="+string(v))
			return nil
		})
	}))
	return out
}

// TestReleaseMappedKeepsTheState drops the mapped pages between writes and
// reads: every read after a release sees what was committed before it.
func TestReleaseMappedKeepsTheState(t *testing.T) {
	db := seeded(t, 100)
	w := newWriter(t, db, &owner{})
	before := records(t, db)
	require.NoError(t, db.ReleaseMapped(nil))
	after := records(t, db)
	require.Equal(t, before, after)

	for i := range 3 {
		require.NoError(t, w.Update(put(fmt.Sprint("a lighthouse at dusk ", i))))
		require.NoError(t, db.ReleaseMapped(nil))
	}
	released := db.released.Load()
	require.Equal(t, db.Commits(), released)
	require.NoError(t, db.ReleaseMapped(nil)) // nothing written since: nothing to do
	require.Equal(t, released, db.released.Load())

	now := records(t, db)
	require.Len(t, now, len(before)+3)
	require.Subset(t, now, before)
	require.Contains(t, now, "a lighthouse at dusk 0=v")
}

// TestReleaseMappedUsesTheOwnersRead: the pages are dropped inside the
// owner's read, whose error is the release's; with nothing written since
// the last release, whatever it returned, nothing is read.
func TestReleaseMappedUsesTheOwnersRead(t *testing.T) {
	db := seeded(t, 10)
	reads := 0
	var fail error
	read := func(fn func(*bolt.Tx) error) error {
		reads++
		if fail != nil {
			return fail
		}
		return db.View(fn)
	}
	require.NoError(t, db.ReleaseMapped(read))
	assert.Equal(t, 0, reads, "nothing written yet")
	db.NoteCommit()
	require.NoError(t, db.ReleaseMapped(read))
	assert.Equal(t, 1, reads)
	db.NoteCommit()
	fail = errors.New("the state is incomplete")
	assert.EqualError(t, db.ReleaseMapped(read), "the state is incomplete")
	require.NoError(t, db.ReleaseMapped(read))
	assert.Equal(t, 2, reads, "nothing written since the failed release")
}

// TestReleaseMappedUnderLoad releases the pages over and over while writers
// and readers run: no read sees a torn or missing record.
func TestReleaseMappedUnderLoad(t *testing.T) {
	db := seeded(t, 100)
	w := newWriter(t, db, &owner{})
	// The releaser releases once for each step of the workers, while they
	// go on: it waits on them, never spins.
	stop, stepped := make(chan struct{}), make(chan struct{}, 1)
	step := func() {
		select {
		case stepped <- struct{}{}:
		default: // a release is already due
		}
	}
	var released sync.WaitGroup
	released.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-stepped:
				db.NoteCommit() // as if something was written: release every time
				if !assert.NoError(t, db.ReleaseMapped(nil)) {
					return
				}
			}
		}
	})
	var work sync.WaitGroup
	for wk := range 4 {
		work.Go(func() {
			for i := range 50 {
				step()
				if wk%2 == 0 {
					if !assert.NoError(t, w.Update(put(fmt.Sprintf("a harbour at noon %d/%d", wk, i)))) {
						return
					}
					continue
				}
				err := db.View(func(btx *bolt.Tx) error {
					c := btx.Bucket(bRecords).Cursor()
					n := 0
					for k, v := c.First(); k != nil && n < 20+i%5; k, v = c.Next() {
						assert.NotEmpty(t, k)
						assert.Contains(t, []string{"record", "v"}, string(v), "a whole value")
						n++
					}
					return nil
				})
				if !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	work.Wait()
	close(stop)
	released.Wait()
	assert.Len(t, records(t, db), 100+100)
}
