package sim

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// tx is one transaction with the helpers of the engine.
type tx struct {
	*bolt.Tx
	e       *Engine
	now     time.Time
	changed map[uint64]bool       // jobs whose state changed, to wake waiters
	nextDue int64                 // the earliest pending event when the transaction ended
	notes   map[lifecycleNote]int // lifecycle paths taken, counted once committed
	changes []Change              // what subscribers hear once committed
	meter   meterNotes            // what the metrics count once committed

	reloadPrincipals  bool         // tokens or workspaces changed: reload them all
	addedTokens       []Token      // tokens added: cached once committed
	addedWorkspaces   []*Workspace // workspaces added: cached once committed
	removedWorkspaces []uint64     // workspaces deleted: forgotten once committed
	addedSandboxes    []*Sandbox   // sandboxes added: indexed once committed
	removedSandboxes  []*Sandbox   // sandboxes deleted: forgotten once committed
	workspacesChanged bool         // a workspace was put back to its start: subscribers hear of it
	bulk              *bulk        // the bulk write this transaction is part of, if any
	library           *libraryCopy // a sandbox's library copied beforehand, for addWorkspaceWith to adopt
	// workspaces are the workspace records read or put in this
	// transaction, decoded (tx.workspace hands out copies).
	workspaces map[uint64]*Workspace
	// packed: the append-only buckets' pages are filled whole (pack).
	packed bool
	// deferWorkspaces: a workspace put is kept in workspaces and written
	// once by finish (the writer's groups); dirtyWorkspaces are those to
	// write, in the order they were first put.
	deferWorkspaces bool
	dirtyWorkspaces []uint64
	// fresh are the workspaces whose assets this transaction inserted
	// without their index entries (index.go), for indexFresh.
	fresh []freshWorkspace
}

func (e *Engine) newTx(btx *bolt.Tx) *tx {
	return &tx{Tx: btx, e: e, now: e.clock.Now()}
}

func (t *tx) b(name []byte) *bolt.Bucket {
	b := t.Bucket(name)
	if t.packed && b != nil && b.FillPercent != 1 && schema.IsAppendOnly(name) {
		b.FillPercent = 1
	}
	return b
}

// pack fills the pages of the append-only buckets whole in this write. The
// setting lives on the transaction's bucket handles, which bbolt keeps for
// the transaction; it is made as each is opened (tx.b), so that a write
// opens only the buckets it touches (each opened costs a seek and a few
// allocations, in every commit).
func (t *tx) pack() { t.packed = true }

func (t *tx) touch(jobID uint64) {
	if t.changed == nil {
		t.changed = map[uint64]bool{}
	}
	t.changed[jobID] = true
}

// finish writes the index entries the assets inserted may need, saves the
// clock and the rate windows, and notes the next due event.
func (t *tx) finish() error {
	if err := t.indexFresh(); err != nil {
		return err
	}
	if err := t.flushWorkspaces(); err != nil {
		return err
	}
	t.nextDue = firstDue(t.Tx)
	if err := putChanged(t.b(bMeta), keyClock, u64(uint64(t.now.UnixNano()))); err != nil {
		return err
	}
	if err := t.keepSignKey(); err != nil {
		return err
	}
	// A real clock is wall time plus an offset, kept across restarts; the
	// other modes have none.
	if off, ok := t.e.clock.offset(); ok {
		if err := putChanged(t.b(bMeta), keyClockOffset, u64(uint64(off))); err != nil {
			return err
		}
	} else if err := t.b(bMeta).Delete(keyClockOffset); err != nil {
		return err
	}
	return t.e.rate.flush(t)
}

var keyClock, keyClockOffset = []byte("clock"), []byte("clock_offset")

// putChanged puts v at k unless it is there already: a commit whose clock
// did not move (a manual clock between steps) leaves the meta bucket as it
// was, unwritten.
func putChanged(b *bolt.Bucket, k, v []byte) error {
	if bytes.Equal(b.Get(k), v) {
		return nil
	}
	return b.Put(k, v)
}

func (t *tx) afterCommit() error {
	e := t.e
	e.publishNextDue(t.nextDue)
	for id := range t.changed {
		e.hub.wake(id)
	}
	if t.notes != nil {
		e.cov.add(t.notes)
	}
	e.meter.add(&t.meter)
	if t.reloadPrincipals {
		if err := e.db.View(e.loadPrincipals); err != nil {
			return fmt.Errorf("reload state after commit: %w", err)
		}
	} else if len(t.addedTokens) > 0 || len(t.addedWorkspaces) > 0 || len(t.removedWorkspaces) > 0 || len(t.addedSandboxes) > 0 || len(t.removedSandboxes) > 0 {
		// Adding or removing one costs the same at 1 and at 10,000 workspaces.
		e.mu.Lock()
		for _, w := range t.addedWorkspaces {
			e.workspaces[w.ID] = &Workspace{ID: w.ID, Name: w.Name, Plan: w.Plan, RateLimit: w.RateLimit, PublishingAllowed: w.PublishingAllowed}
		}
		for _, tok := range t.addedTokens {
			e.tokens[tok.Token] = tok
			e.tokensByWS[tok.WorkspaceID] = append(e.tokensByWS[tok.WorkspaceID], tok.Token)
		}
		for _, ws := range t.removedWorkspaces {
			for _, tok := range e.tokensByWS[ws] {
				delete(e.tokens, tok)
			}
			delete(e.tokensByWS, ws)
			delete(e.workspaces, ws)
		}
		for _, s := range t.addedSandboxes {
			e.sandboxes.add(s)
		}
		for _, s := range t.removedSandboxes {
			e.sandboxes.remove(s)
		}
		e.mu.Unlock()
	}
	t.publishChanges()
	return nil
}
