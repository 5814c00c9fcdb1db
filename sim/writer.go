package sim

import (
	"errors"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/internal/store"
)

// Every write goes through one writer goroutine (store.Writer), which
// commits the writes waiting at once in one transaction: group commit. The
// engine is its owner (writerOwner): it makes the group's transaction,
// applies what is due first, finishes the transaction (the clock, the rate
// windows, the workspaces a group decoded once), and, once committed, wakes
// waiters and tells subscribers.

// update runs fn in a write transaction. Writes are committed in groups: the
// writer takes every write waiting when it starts a transaction, so that one
// commit (and one fsync, when durable) serves many requests.
//
// A function must not write before it returns an *Error: its business error
// is reported to its caller while the group's transaction still commits.
func (e *Engine) update(fn func(*tx) error) error {
	return e.w.Update(fn)
}

// bulkUpdate runs fn in the writer, alone, holding the state lock: see
// bulk.go for why and how a bulk write commits several transactions.
func (e *Engine) bulkUpdate(fn func() error) error {
	return e.w.Alone(func() error { return e.runBulk(fn) })
}

// writerOwner is the engine as the owner of the writer's transactions.
type writerOwner struct{ e *Engine }

var _ store.Owner[*tx] = writerOwner{}

func (o writerOwner) Begin(btx *bolt.Tx) *tx {
	t := o.e.newTx(btx)
	t.pack()
	t.deferWorkspaces = true
	return t
}

// Prepare applies the events due by the transaction's time first; too many
// for one transaction are applied in several, before the group's writes.
func (o writerOwner) Prepare(t *tx) (bool, error) { return t.applyDue(o.e.cfg.dueBatch) }

func (o writerOwner) Finish(t *tx) error    { return t.finish() }
func (o writerOwner) Committed(t *tx) error { return t.afterCommit() }

// Refused: a state a bulk write left half-made is not served.
func (o writerOwner) Refused() error {
	if ie := o.e.incomplete.Load(); ie != nil {
		return ie
	}
	return nil
}

func (o writerOwner) Own(err error) bool { return isBusiness(err) }

func (o writerOwner) Panicked(r any, what string) error { return o.e.recovered(r, what) }

func (o writerOwner) Closed() error { return errClosed }

func isBusiness(err error) bool {
	var be *Error
	return errors.As(err, &be) && be.Kind != EINTERNAL
}

// errPanic is what a write that panicked returns: it is rolled back and the
// writer goes on.
var errPanic = &Error{Kind: EINTERNAL, Code: "internal_error", Message: "The operation failed unexpectedly and was rolled back."}

// recovered turns a panic into errPanic, and logs it with its stack.
func (e *Engine) recovered(r any, what string) error {
	e.log.Error(what+" panicked; it was rolled back", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return errPanic
}

// runBulk runs a bulk write with the state to itself: no reader sees the
// state while it is half-made.
func (e *Engine) runBulk(fn func() error) error {
	e.state.Lock()
	defer e.state.Unlock()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = e.recovered(r, "a bulk write")
			}
		}()
		return fn()
	}()
	e.db.NoteCommit()
	if err == nil {
		e.incomplete.Store(nil)
		err = e.db.View(e.reload)
		e.hub.wakeAll()
		e.feed.replaced(e.clock.Now())
	} else if e.db.Unfinished() {
		e.log.Error("a bulk write failed half-way; the state is not served until it is reset", "err", err)
		e.incomplete.Store(&Error{Kind: EUNAVAILABLE, Code: "state_incomplete",
			Message: "A reset or restore failed half-way (" + err.Error() + "); reset the simulation or restart the server."})
	}
	return err
}
