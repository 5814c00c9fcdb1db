// Package store is the engine's state file: a bbolt file laid out in the
// buckets of a Schema, opened with the options the engine needs, and the
// ways it is written and read back.
//
//   - Writer, the one goroutine that writes: it commits the writes waiting
//     at once in one transaction (group commit), and runs a bulk write
//     alone between groups (writer.go).
//   - Bulk, a write of a whole state (a seed, a reset, a restore) in
//     bounded transactions, behind a marker that says it has not finished
//     (bulk.go).
//   - Receive, an uploaded snapshot written beside the state file and
//     checked before anything reads it: its pages, bbolt's own check, then
//     every record by the owner's checks (snapshot.go, pagewalk.go).
//   - ReleaseMapped, the mapped pages handed back to the page cache
//     (mapped.go); Decoder and its appenders, the primitives of compact
//     record encodings (codec.go).
//
// What lies in the buckets (the records, their keys, the indexes) is the
// owner's, package sim: it writes them through the *bolt.Tx a write is
// given. The line is the file: this package knows buckets, transactions
// and pages, never a workspace or an asset. The engine's reads and writes
// still walk bbolt's buckets and cursors themselves (the library's index
// walks, the queue, the ledger), in most of its files: putting them behind
// an API of records here is left for when the index layout changes, so
// that the API is the one the new layout needs.
//
//	db, err := store.Open(path, schema, store.Options{Durable: false})
//	w := store.NewWriter[*tx](db, owner, log)
//	err = w.Update(func(t *tx) error { return t.Bucket(name).Put(k, v) })
package store

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Schema is the layout of a state file: its buckets, and its version.
type Schema struct {
	// Version is written to the meta bucket by a bulk write; a file of
	// another version is refused at open, unless Migrations has one from
	// its version.
	Version string
	// Migrations bring a file of an earlier version to this one, by the
	// version they start from: the owner runs one at open (Condition says
	// which), and Receive runs one on an uploaded snapshot before its
	// records are checked.
	Migrations map[string]Migration
	// Buckets are every bucket of the file, Meta among them, in the order
	// a snapshot's records are checked (a record after those it points
	// at) and copied.
	Buckets [][]byte
	// AppendOnly are the buckets whose records are only ever added after
	// the last of their key range and never rewritten: their pages can be
	// filled whole (bbolt fills half a page before splitting, for random
	// inserts), which about halves them. Records rewritten in place keep
	// the default, or every rewrite that grows a record would split a full
	// page. Each is one of Buckets, the same slice.
	AppendOnly [][]byte
}

// IsAppendOnly reports whether name is one of AppendOnly: the same slice,
// compared by address (bucket names are the owner's variables), so that
// it costs a few comparisons on the path of every write.
func (s *Schema) IsAppendOnly(name []byte) bool {
	for _, a := range s.AppendOnly {
		if len(a) == len(name) && &a[0] == &name[0] {
			return true
		}
	}
	return false
}

// A Migration brings a file of one earlier version to its schema's. It
// works in transactions of its own, bounded, and the last of them writes
// the new version (KeySchema) with the last of its changes: a file a crash
// left half-way is still of its old version, with the old layout whole,
// and is migrated again from the start. Its errors on a record it cannot
// read make an uploaded snapshot Invalid.
type Migration func(db *bolt.DB) error

// Meta is the bucket of what describes the file: its schema version, its
// fingerprint, the marker of an unfinished bulk write, and the owner's own
// keys (its clock, its epoch, ...).
var Meta = []byte("meta")

// Keys of the meta bucket this package writes.
var (
	KeySchema      = []byte("schema")
	KeyFingerprint = []byte("fingerprint")
	// KeyIncomplete marks a state that a bulk write has not finished; its
	// value is the kind of the bulk write (seed, reset, restore).
	KeyIncomplete = []byte("incomplete")
)

// Options configure Open.
type Options struct {
	// Durable makes every commit reach the disk (fsync) before it is
	// acknowledged; otherwise commits skip fsync.
	Durable bool
}

// DB is an open state file. Its bbolt database is embedded: the owner reads
// and writes through it (View, Update, Begin).
type DB struct {
	*bolt.DB
	schema Schema
	path   string

	commits  atomic.Uint64 // write transactions committed (groups and bulk writes)
	released atomic.Uint64 // commits when the mapped pages were last released
	lastBulk BulkStats     // of the last bulk write that finished
}

// Open opens the state file at path, or creates it empty. A file another
// process holds open is refused after a second, not waited for.
func Open(path string, schema Schema, o Options) (*DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: !o.Durable, NoFreelistSync: true, InitialMmapSize: initialMmapSize()})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: the file is in use by another process", path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &DB{DB: db, schema: schema, path: path}, nil
}

// Schema is the layout the file was opened with.
func (db *DB) Schema() *Schema { return &db.schema }

// Commits is how many write transactions were committed since Open: a
// group of the writer counts one, a bulk write one. Readers that keep what
// they read until the next write compare it.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// NoteCommit counts a commit made outside the writer's groups (a bulk
// write counts one, whatever it committed), before any reader may see what
// it wrote.
func (db *DB) NoteCommit() { db.commits.Add(1) }

// LastBulk is what the last bulk write that finished wrote.
func (db *DB) LastBulk() BulkStats { return db.lastBulk }

// Condition is what a file holds, as Open finds it.
type Condition struct {
	// New: the file has no meta bucket; it was never seeded.
	New bool
	// Unfinished is the kind of a bulk write (seed, reset, restore) that
	// did not finish, "" when none: the state is half-made.
	Unfinished string
	// Mismatch, when not nil, says the file is of another schema version
	// (one no migration starts from) or another fingerprint than the one
	// asked.
	Mismatch error
	// Older is the version of a file of the fingerprint asked whose
	// schema a migration brings to this one (Schema.Migrations); "" when
	// the file is of this version.
	Older string
}

// Condition reads what the file holds, against the fingerprint of the
// state the owner would seed.
func (db *DB) Condition(fingerprint string) (Condition, error) {
	var c Condition
	err := db.View(func(btx *bolt.Tx) error {
		meta := btx.Bucket(Meta)
		switch {
		case meta == nil:
			c.New = true
		case meta.Get(KeyIncomplete) != nil:
			c.Unfinished = string(meta.Get(KeyIncomplete))
		case string(meta.Get(KeySchema)) != db.schema.Version && db.schema.Migrations[string(meta.Get(KeySchema))] == nil:
			c.Mismatch = fmt.Errorf("%s has state schema %q; this version needs %q: remove the file or reset it", db.path, meta.Get(KeySchema), db.schema.Version)
		case string(meta.Get(KeyFingerprint)) != fingerprint:
			c.Mismatch = fmt.Errorf("%s was seeded from other fixtures or another seed: remove the file or reset it", db.path)
		case string(meta.Get(KeySchema)) != db.schema.Version:
			c.Older = string(meta.Get(KeySchema))
		}
		return nil
	})
	return c, err
}

// Migrate brings a file of an earlier version (Condition.Older) to the
// schema's, with migrate (the schema's migration, or one the owner made of
// it with options of its own), and counts its commit.
func (db *DB) Migrate(migrate Migration) error {
	if err := migrate(db.DB); err != nil {
		return err
	}
	db.NoteCommit()
	return nil
}

// Unfinished reports whether the file holds an unfinished bulk write, or
// no state at all.
func (db *DB) Unfinished() bool {
	c, err := db.Condition("")
	return err == nil && (c.New || c.Unfinished != "")
}

// AddMissingBuckets adds the buckets of the schema a file written by an
// earlier version lacks: they start empty, and the file stays readable by
// that version.
func (db *DB) AddMissingBuckets() error {
	var missing [][]byte
	if err := db.View(func(btx *bolt.Tx) error {
		for _, name := range db.schema.Buckets {
			if btx.Bucket(name) == nil {
				missing = append(missing, name)
			}
		}
		return nil
	}); err != nil || len(missing) == 0 {
		return err
	}
	return db.Update(func(btx *bolt.Tx) error {
		for _, name := range missing {
			if _, err := btx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("add bucket %s: %w", name, err)
			}
		}
		return nil
	})
}

// wipe empties the file: every bucket of the schema, and no other.
func (db *DB) wipe(btx *bolt.Tx) error {
	for _, name := range db.schema.Buckets {
		if btx.Bucket(name) != nil {
			if err := btx.DeleteBucket(name); err != nil {
				return fmt.Errorf("wipe %s: %w", name, err)
			}
		}
		if _, err := btx.CreateBucket(name); err != nil {
			return fmt.Errorf("wipe %s: %w", name, err)
		}
	}
	return nil
}

// initialMmapSize is the address space the state file is mapped with at
// first. Each time the file outgrows its mapping, bbolt maps it again and
// first copies every value a write in progress refers to: with large files
// (uploads) that doubled their memory. 1 GiB of address space costs
// nothing on 64-bit systems, except on Windows, where bbolt grows the file
// itself to the size of its mapping.
func initialMmapSize() int {
	if runtime.GOOS == "windows" {
		return 64 << 20
	}
	return 1 << 30
}
