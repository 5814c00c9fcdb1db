package sim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Reset wipes the state and seeds it again from the fixtures; the clock
// goes back to start.
func (e *Engine) Reset(start time.Time) error {
	return e.update(func(t *tx) error {
		if err := wipe(t.Tx); err != nil {
			return err
		}
		t.e.rate.reset()
		t.e.clock.restore(start)
		t.now = e.clock.Now()
		if err := t.writeMeta(); err != nil {
			return err
		}
		if err := t.nextEpoch(e.epoch.Load()); err != nil {
			return err
		}
		if err := t.seed(); err != nil {
			return err
		}
		t.replaced = true
		return nil
	})
}

func wipe(btx *bolt.Tx) error {
	for _, name := range allBuckets {
		if btx.Bucket(name) != nil {
			if err := btx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := btx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot writes a consistent copy of the whole state (a bbolt file).
func (e *Engine) Snapshot(w io.Writer) (int64, error) {
	var n int64
	err := e.db.View(func(btx *bolt.Tx) error {
		var err error
		n, err = btx.WriteTo(w)
		return err
	})
	return n, err
}

// Restore replaces the whole state with a snapshot taken by Snapshot from a
// simulation of the same fixtures and seed; the clock goes to the
// snapshot's time.
func (e *Engine) Restore(r io.Reader) error {
	// Beside the state file: the one place the server may write.
	dir, err := os.MkdirTemp(filepath.Dir(e.cfg.Path), ".restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "snapshot.db")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot cannot be read: " + err.Error() + "."}
	}
	if err := f.Close(); err != nil {
		return err
	}
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot is not a state file: " + err.Error() + "."}
	}
	defer src.Close()
	return src.View(func(stx *bolt.Tx) error {
		meta := stx.Bucket(bMeta)
		if meta == nil || string(meta.Get([]byte("fingerprint"))) != e.fingerprint() || string(meta.Get([]byte("schema"))) != schemaVersion {
			return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot comes from other fixtures, another seed or another version."}
		}
		return e.update(func(t *tx) error {
			if err := wipe(t.Tx); err != nil {
				return err
			}
			t.e.rate.reset() // the snapshot's windows come with it
			for _, name := range allBuckets {
				sb := stx.Bucket(name)
				if sb == nil {
					continue
				}
				db := t.b(name)
				if err := sb.ForEach(func(k, v []byte) error { return db.Put(bytes.Clone(k), bytes.Clone(v)) }); err != nil {
					return err
				}
				if err := db.SetSequence(sb.Sequence()); err != nil {
					return err
				}
			}
			if v := t.b(bMeta).Get([]byte("clock")); v != nil {
				e.clock.restore(Stamp(getU64(v)).Time())
				t.now = e.clock.Now()
			}
			if err := t.nextEpoch(max(e.epoch.Load(), readEpoch(stx))); err != nil {
				return err
			}
			t.replaced = true
			return nil
		})
	})
}

func (e *Engine) fingerprint() string {
	return fmt.Sprintf("%s/%d", e.world.Fingerprint(), e.seed)
}

// nextEpoch moves file addresses on after a reset or restore.
func (t *tx) nextEpoch(after uint64) error {
	t.epoch = after + 1
	return t.b(bMeta).Put([]byte("epoch"), u64(t.epoch))
}

func (t *tx) writeMeta() error {
	meta := t.b(bMeta)
	if err := meta.Put([]byte("schema"), []byte(schemaVersion)); err != nil {
		return err
	}
	return meta.Put([]byte("fingerprint"), []byte(t.e.fingerprint()))
}
