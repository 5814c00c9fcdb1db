package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A snapshot comes from outside: any byte of it may be wrong. Receive makes
// sure of it before the live state is touched, in three passes:
//
//  1. The page structure, read with ReadAt before bbolt maps anything
//     (checkPages, pagewalk.go): both meta pages valid (magic, version,
//     checksum, page size); in the one bbolt reads (the later), the high
//     water mark within the file; every page reachable from the root (and
//     the freelist page) below it, reached once, naming itself, of the
//     right type, with every element, key and value inside the page, keys
//     in order, nested buckets only at the top; branch pages not empty.
//     bbolt trusts all of this: it reads pages through unsafe pointers into
//     the mapping, some of it in goroutines of its own (Tx.Check, the
//     freelist rebuild of a file without a synced freelist) where a bad
//     pointer is a fault or a panic nobody can recover. bbolt itself only
//     checks, at open, that the file holds two pages and a valid meta page:
//     it does not hold the meta's page count against the file's size, so a
//     cut file maps pages past its end (SIGBUS when read). After this pass,
//     what bbolt reads lies inside the file. The file is then extended to
//     the size bbolt maps, so that even a read this pass failed to foresee
//     finds zeros, not a SIGBUS.
//  2. bbolt's own consistency check (Tx.Check: freed or doubly used pages,
//     key order), in a read-only open, under recover and with faults turned
//     into panics for this goroutine (debug.SetPanicOnFault).
//  3. A snapshot of an earlier version of the schema, and of this
//     fingerprint, is migrated (Schema.Migrations), under the same recover:
//     a record the migration cannot read makes it Invalid.
//  4. The buckets (the schema's and no other, no nested one, a meta bucket
//     of this schema version and fingerprint), then every record decoded by
//     the owner's Checker, under the same recover.
//
// Not covered: a file changed by someone else while it is checked (it is
// ours, in a fresh directory beside the state file).

// Invalid says why an uploaded snapshot is not usable.
type Invalid struct {
	Reason string
}

func (e *Invalid) Error() string { return "the snapshot is not usable: " + e.Reason }

func invalid(format string, args ...any) *Invalid {
	return &Invalid{Reason: fmt.Sprintf(format, args...)}
}

// Checker checks the records of an uploaded snapshot, bucket by bucket in
// the schema's order: Record's error makes the snapshot Invalid, with the
// bucket and the key. It may read the snapshot's transaction it was made
// for (the records a record points at).
type Checker interface {
	Record(bucket string, k, v []byte) error
}

// Snapshot is an uploaded snapshot that passed every check, open
// read-only in a directory of its own beside the state file.
type Snapshot struct {
	// DB is the snapshot, open read-only.
	DB *bolt.DB
	// Records is how many records it holds.
	Records int64
	dir     string
}

// Close closes the snapshot and removes its file.
func (s *Snapshot) Close() error {
	err := s.DB.Close()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

// Receive writes the snapshot r reads to a file beside the state file (the
// one place the server may write) and checks it completely, in the
// caller's goroutine: an unusable one is an *Invalid error, a sound one is
// open read-only. checker makes the owner's Checker of the snapshot's read
// transaction, for a file of this schema and fingerprint.
func (db *DB) Receive(r io.Reader, fingerprint string, checker func(stx *bolt.Tx) Checker) (*Snapshot, error) {
	dir, err := os.MkdirTemp(filepath.Dir(db.path), ".restore-")
	if err != nil {
		return nil, err
	}
	snap, err := receive(dir, r, db.schema, fingerprint, checker)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return snap, nil
}

func receive(dir string, r io.Reader, schema Schema, fingerprint string, checker func(*bolt.Tx) Checker) (*Snapshot, error) {
	path := filepath.Join(dir, "snapshot.db")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return nil, invalid("it cannot be read: %v", err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	bdb, records, err := check(path, schema, fingerprint, checker)
	if err != nil {
		return nil, err
	}
	return &Snapshot{DB: bdb, Records: records, dir: dir}, nil
}

// check checks the file at path and opens it read-only.
func check(path string, schema Schema, fingerprint string, checker func(*bolt.Tx) Checker) (db *bolt.DB, records int64, err error) {
	if err := checkPages(path); err != nil {
		return nil, 0, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = invalid("the file is damaged (%v)", r)
		}
		if err != nil && db != nil {
			db.Close()
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return nil, 0, invalid("it is not a state file (%v)", err)
	}
	err = db.View(func(stx *bolt.Tx) error {
		var first error
		n := 0
		for err := range stx.Check() { // drained to the end: Check's goroutine waits for each send
			if first == nil {
				first = err
			}
			n++
		}
		if first != nil {
			return invalid("bbolt's check found %d problems, the first: %v", n, first)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if migrate := olderSchema(db, schema, fingerprint); migrate != nil {
		if err := db.Close(); err != nil {
			return nil, 0, err
		}
		if db, err = migrated(path, migrate); err != nil {
			return nil, 0, err
		}
	}
	err = db.View(func(stx *bolt.Tx) error {
		records, err = checkRecords(stx, schema, fingerprint, checker(stx))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return db, records, nil
}

// olderSchema is the migration of a snapshot of this fingerprint and of
// an earlier version of the schema, nil when there is none to run.
func olderSchema(db *bolt.DB, schema Schema, fingerprint string) Migration {
	var migrate Migration
	_ = db.View(func(stx *bolt.Tx) error {
		if meta := stx.Bucket(Meta); meta != nil && string(meta.Get(KeyFingerprint)) == fingerprint {
			if v := string(meta.Get(KeySchema)); v != schema.Version {
				migrate = schema.Migrations[v]
			}
		}
		return nil
	})
	return migrate
}

// migrated migrates the snapshot at path and opens it read-only again.
func migrated(path string, migrate Migration) (*bolt.DB, error) {
	rw, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return nil, invalid("it is not a state file (%v)", err)
	}
	err = migrate(rw)
	if cerr := rw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var inv *Invalid
		if errors.As(err, &inv) {
			return nil, err
		}
		return nil, invalid("it is of an earlier version that could not be migrated (%v)", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return nil, invalid("it is not a state file (%v)", err)
	}
	return db, nil
}

// checkRecords checks the buckets of a snapshot and hands every record to
// the owner's checker; it returns how many records there are.
func checkRecords(stx *bolt.Tx, schema Schema, fingerprint string, c Checker) (int64, error) {
	known := map[string]bool{}
	for _, name := range schema.Buckets {
		known[string(name)] = true
	}
	if err := stx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !known[string(name)] {
			return invalid("it holds an unknown bucket %q", name)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	meta := stx.Bucket(Meta)
	if meta == nil {
		return 0, invalid("it has no meta bucket")
	}
	if string(meta.Get(KeySchema)) != schema.Version || string(meta.Get(KeyFingerprint)) != fingerprint {
		return 0, invalid("it comes from other fixtures, another seed or another version")
	}
	var records int64
	for _, name := range schema.Buckets { // in this order: records are checked after those they point at
		b := stx.Bucket(name)
		if b == nil {
			continue
		}
		err := b.ForEach(func(k, v []byte) error {
			records++
			if v == nil {
				return invalid("bucket %q, key %s: a nested bucket", name, ShowKey(k))
			}
			if err := c.Record(string(name), k, v); err != nil {
				return invalid("bucket %q, key %s: %v", name, ShowKey(k), err)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return records, nil
}

// ShowKey shows a key in hexadecimal, its first 32 bytes when longer.
func ShowKey(k []byte) string {
	if len(k) > 32 {
		return fmt.Sprintf("%x…", k[:32])
	}
	return fmt.Sprintf("%x", k)
}
