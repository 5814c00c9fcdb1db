package sim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Reset wipes the state and seeds it again from the fixtures; the clock
// goes back to start. It runs in the writer, alone, in bounded transactions
// (see bulk.go): requests wait for it, then see the new state.
func (e *Engine) Reset(start time.Time) error {
	return e.bulkUpdate(func() error {
		e.rate.reset()
		e.clock.restore(start)
		return e.seedState("reset", e.epoch.Load()+1)
	})
}

// Snapshot writes a consistent copy of the whole state (a bbolt file).
func (e *Engine) Snapshot(w io.Writer) (int64, error) {
	var n int64
	err := e.read(func(btx *bolt.Tx) error {
		var err error
		n, err = btx.WriteTo(w)
		return err
	})
	return n, err
}

// Restore replaces the whole state with a snapshot taken by Snapshot from a
// simulation of the same fixtures and seed; the clock goes to the
// snapshot's time.
//
// The snapshot is written to a file beside the state file and checked
// completely, in the caller's goroutine, before the live state is touched
// (see checkSnapshot): a bad one is an EINVALID invalid_snapshot error that
// says what is wrong, and the state goes on untouched. A sound one is then
// copied into the state by a bulk write (see bulk.go).
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
		return invalidSnapshot("it cannot be read: %v", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	snap, err := e.checkSnapshot(path)
	if err != nil {
		return err
	}
	defer snap.db.Close()
	if err := e.bulkUpdate(func() error { return e.restoreFrom(snap) }); err != nil {
		return err
	}
	// Counts kept per workspace were of the workspaces replaced.
	e.cov.mu.Lock()
	e.cov.byWS = nil
	e.cov.mu.Unlock()
	return nil
}

// restoreFrom copies a checked snapshot into the state, in bounded
// transactions, in key order.
func (e *Engine) restoreFrom(snap *snapshot) error {
	e.rate.reset() // the snapshot's windows come with it
	b, err := e.beginBulk("restore", snap.records, e.clock.Now(), 0)
	if err != nil {
		return err
	}
	defer b.abort()
	// The snapshot's bytes stay valid while its read transaction is open,
	// which outlives every live transaction they are put in.
	err = snap.db.View(func(stx *bolt.Tx) error {
		for _, name := range allBuckets {
			sb := stx.Bucket(name)
			if sb == nil {
				continue
			}
			c := sb.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if err := b.t.b(name).Put(k, v); err != nil {
					return fmt.Errorf("restore %s: %w", name, err)
				}
				if err := b.t.step(); err != nil {
					return err
				}
			}
			if err := b.t.b(name).SetSequence(sb.Sequence()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if snap.clock != 0 {
		e.clock.restore(snap.clock.Time())
		b.t.now = e.clock.Now()
	}
	if err := b.t.nextEpoch(max(e.epoch.Load(), snap.epoch)); err != nil {
		return err
	}
	return b.end()
}

func (e *Engine) fingerprint() string {
	return fmt.Sprintf("%s/%d", e.world.Fingerprint(), e.seed)
}

// nextEpoch moves file addresses on after a reset or restore.
func (t *tx) nextEpoch(after uint64) error {
	return t.b(bMeta).Put([]byte("epoch"), u64(after+1))
}

func (t *tx) writeMeta() error {
	meta := t.b(bMeta)
	if err := meta.Put([]byte("schema"), []byte(schemaVersion)); err != nil {
		return err
	}
	return meta.Put([]byte("fingerprint"), []byte(t.e.fingerprint()))
}
