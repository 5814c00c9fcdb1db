package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// checker is the tests' Checker: a log entry must be "entry", and a
// record's key must be in the log.
type checker struct{ stx *bolt.Tx }

func (c checker) Record(bucket string, k, v []byte) error {
	switch bucket {
	case "log":
		if string(v) != "entry" {
			return fmt.Errorf("a log entry of %q", v)
		}
	case "records":
		if c.stx.Bucket(bLog).Get(k) == nil {
			return errors.New("a record with no log entry")
		}
	}
	return nil
}

func newChecker(stx *bolt.Tx) Checker { return checker{stx} }

func snapshotOf(t testing.TB, db *DB) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, db.View(func(btx *bolt.Tx) error { _, err := btx.WriteTo(&buf); return err }))
	return buf.Bytes()
}

// changed returns a copy of snap changed by fn through bbolt.
func changed(t testing.TB, snap []byte, fn func(*bolt.Tx) error) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap.db")
	require.NoError(t, os.WriteFile(path, snap, 0o600))
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.Update(fn))
	require.NoError(t, db.Close())
	out, err := os.ReadFile(path)
	require.NoError(t, err)
	return out
}

func patch(snap []byte, off int, b ...byte) []byte {
	out := bytes.Clone(snap)
	copy(out[off:], b)
	return out
}

// leftovers are the files Receive left beside the state file.
func leftovers(t *testing.T, db *DB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(db.Path()))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.Name() != "state.db" {
			out = append(out, e.Name())
		}
	}
	return out
}

// A sound snapshot is received open read-only, its records counted; its
// file goes with Close.
func TestReceive(t *testing.T) {
	db := seeded(t, 40)
	snap, err := db.Receive(bytes.NewReader(snapshotOf(t, db)), "fp", newChecker)
	require.NoError(t, err)
	assert.Equal(t, int64(80+2), snap.Records, "records, log entries, and meta's schema and fingerprint")
	require.NoError(t, snap.DB.View(func(btx *bolt.Tx) error {
		assert.Equal(t, 40, btx.Bucket(bRecords).Stats().KeyN)
		return nil
	}))
	assert.Len(t, leftovers(t, db), 1, "its directory beside the state file")
	require.NoError(t, snap.Close())
	assert.Empty(t, leftovers(t, db))
}

// A snapshot is refused, Invalid with a reason, whatever is wrong with it:
// its pages, its buckets, its meta, a record; nothing is left behind.
func TestReceiveRefusesBadSnapshots(t *testing.T) {
	db := seeded(t, 40)
	snap := snapshotOf(t, db)
	le := binary.LittleEndian
	root := int(le.Uint64(snap[pageHeader+16:]))
	psz := int(le.Uint32(snap[pageHeader+8:]))
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "not a state file", nil},
		{"text", "not a state file", []byte("not a state file")},
		{"cut in half", "cut short", snap[:len(snap)/2]},
		{"meta checksum", "bad checksum", patch(snap, pageHeader+20, 0xff)},
		{"root page header", "calls itself", patch(snap, root*psz, 0x99)},
		{"root page type", "has type", patch(snap, root*psz+8, 0x40)},
		{"other fingerprint", "other fixtures, another seed or another version",
			changed(t, snap, func(btx *bolt.Tx) error { return btx.Bucket(Meta).Put(KeyFingerprint, []byte("fp2")) })},
		{"other version", "other fixtures, another seed or another version",
			changed(t, snap, func(btx *bolt.Tx) error { return btx.Bucket(Meta).Put(KeySchema, []byte("6")) })},
		{"no meta", "no meta bucket", changed(t, snap, func(btx *bolt.Tx) error { return btx.DeleteBucket(Meta) })},
		{"unknown bucket", `unknown bucket "extra"`, changed(t, snap, func(btx *bolt.Tx) error { _, err := btx.CreateBucket([]byte("extra")); return err })},
		{"nested bucket", `bucket "records" holds a nested bucket`,
			changed(t, snap, func(btx *bolt.Tx) error { _, err := btx.Bucket(bRecords).CreateBucket([]byte("x")); return err })},
		{"a record", `bucket "log", key 0000000000000003: a log entry of "torn"`,
			changed(t, snap, func(btx *bolt.Tx) error { return btx.Bucket(bLog).Put(u64(3), []byte("torn")) })},
		{"a record to nowhere", `bucket "records", key 00000000000003e7: a record with no log entry`,
			changed(t, snap, func(btx *bolt.Tx) error { return btx.Bucket(bRecords).Put(u64(999), nil) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.Receive(bytes.NewReader(tc.data), "fp", newChecker)
			var inv *Invalid
			require.ErrorAs(t, err, &inv)
			assert.Contains(t, inv.Reason, tc.want)
			assert.Equal(t, "the snapshot is not usable: "+inv.Reason, err.Error())
			assert.Empty(t, leftovers(t, db))
		})
	}
}

// FuzzReceive feeds Receive damaged snapshots: it must refuse them as
// Invalid or accept them, never panic or crash, and leave nothing behind.
//
//	go test -run XXX -fuzz FuzzReceive -fuzztime 2000x ./internal/store/
func FuzzReceive(f *testing.F) {
	db := seeded(f, 5)
	snap := snapshotOf(f, db)
	root := int(binary.LittleEndian.Uint64(snap[pageHeader+16:]))
	f.Add(snap)
	f.Add(snap[:len(snap)/2])
	f.Add(patch(snap, root*4096+pageHeader+4, 0xff, 0xff))
	f.Add(patch(snap, root*4096+pageHeader+16+8, 0x30))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := db.Receive(bytes.NewReader(data), "fp", newChecker)
		if err != nil {
			var inv *Invalid
			require.ErrorAs(t, err, &inv)
		} else {
			require.NoError(t, s.Close())
		}
		assert.Empty(t, leftovers(t, db))
	})
}
