package store

import (
	bolt "go.etcd.io/bbolt"
)

// ReleaseMapped hands the state file's pages this process has read back to
// the kernel's page cache, when something was written since the last call.
//
// bbolt reads the state through a memory map, and writes each changed page
// to a new place in the file: under a steady load of writes the pages the
// process has touched soon cover the whole file, and they all count in its
// resident size, though they are only a clean copy of the file the kernel
// already caches. Dropping them from the map costs nothing to correctness
// (the next read of a page maps it again, from the same cache) and little
// to speed (the pages in use are mapped again at the next read, a minor
// fault each). The server calls it five times a second: under a load of
// 15,000 creations a second the file grows by about 4 MB in between.
//
// read runs its function in a read transaction (the owner's, which waits
// for a bulk write to end; nil: the file's own): a read transaction holds
// bbolt's map lock, so the map cannot move or grow while the pages are
// dropped.
func (db *DB) ReleaseMapped(read func(func(*bolt.Tx) error) error) error {
	commits := db.commits.Load()
	if commits == db.released.Load() {
		return nil
	}
	db.released.Store(commits)
	if read == nil {
		read = db.View
	}
	return read(func(btx *bolt.Tx) error {
		return dropPages(db.Info().Data, btx.Size())
	})
}
