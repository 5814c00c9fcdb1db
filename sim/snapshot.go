package sim

import (
	"errors"
	"fmt"
	"io"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
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
// (store.DB.Receive, with the engine's checks of every record: see
// snapcheck.go): a bad one is an EINVALID invalid_snapshot error that says
// what is wrong, and the state goes on untouched. A sound one is then
// copied into the state by a bulk write (see bulk.go).
func (e *Engine) Restore(r io.Reader) error {
	snap, rc, err := e.receive(r)
	if err != nil {
		return err
	}
	defer snap.Close()
	if err := e.bulkUpdate(func() error { return e.restoreFrom(snap, rc.clock, rc.epoch) }); err != nil {
		return err
	}
	// Counts kept per workspace were of the workspaces replaced.
	e.cov.mu.Lock()
	e.cov.byWS = nil
	e.cov.mu.Unlock()
	return nil
}

// receive receives a snapshot into a file of its own and checks it, its
// records included (recordCheck), changing nothing of the state: a
// snapshot of an earlier schema is migrated; one that is not this
// state's, or not whole, is the caller's invalid_snapshot.
func (e *Engine) receive(r io.Reader) (*store.Snapshot, *recordCheck, error) {
	var rc *recordCheck
	snap, err := e.db.Receive(r, e.fingerprint(), func(stx *bolt.Tx) store.Checker {
		rc = &recordCheck{e: e, stx: stx, workspaces: map[uint64]bool{}}
		return rc
	})
	var inv *store.Invalid
	if errors.As(err, &inv) {
		return nil, nil, invalidSnapshot("%s", inv.Reason)
	}
	if err != nil {
		return nil, nil, err
	}
	return snap, rc, nil
}

// restoreFrom copies a checked snapshot into the state, in bounded
// transactions, in key order; the clock goes to the snapshot's, and file
// addresses move on past its epoch.
func (e *Engine) restoreFrom(snap *store.Snapshot, clock Stamp, epoch uint64) error {
	e.rate.reset() // the snapshot's windows come with it
	b, err := e.beginBulk("restore", snap.Records, e.clock.Now(), 0)
	if err != nil {
		return err
	}
	defer b.Abort()
	if err := snap.DB.View(b.Copy); err != nil {
		return err
	}
	if clock != 0 {
		e.clock.restore(clock.Time())
		b.t.now = e.clock.Now()
	}
	if err := b.t.nextEpoch(max(e.epoch.Load(), epoch)); err != nil {
		return err
	}
	return b.end()
}

func (e *Engine) fingerprint() string { return StateFingerprint(e.world, e.seed) }

// StateFingerprint is what a state file seeded from w with seed is
// identified by: a file or a snapshot of another is refused.
func StateFingerprint(w *fixtures.World, seed uint64) string {
	return fmt.Sprintf("%s/%d", w.Fingerprint(), seed)
}

// nextEpoch moves file addresses on after a reset or restore.
func (t *tx) nextEpoch(after uint64) error {
	return t.b(bMeta).Put([]byte("epoch"), u64(after+1))
}
