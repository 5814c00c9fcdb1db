package sim

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// op is one write waiting for the writer: fn runs in the group's
// transaction; bulk, when set, runs alone and commits its own transactions.
type op struct {
	fn       func(*tx) error
	bulk     func() error
	err      error
	done     chan struct{}
	panicked bool // fn panicked: it fails and is not run again
}

// update runs fn in a write transaction. Writes are committed in groups: the
// writer takes every write waiting when it starts a transaction, so that one
// commit (and one fsync, when durable) serves many requests.
//
// A function must not write before it returns an *Error: its business error
// is reported to its caller while the group's transaction still commits.
func (e *Engine) update(fn func(*tx) error) error {
	return e.send(&op{fn: fn, done: make(chan struct{})})
}

// bulkUpdate runs fn in the writer, alone, holding the state lock: see
// bulk.go for why and how a bulk write commits several transactions.
func (e *Engine) bulkUpdate(fn func() error) error {
	return e.send(&op{bulk: fn, done: make(chan struct{})})
}

func (e *Engine) send(o *op) error {
	e.sendMu.Lock()
	if e.closing {
		e.sendMu.Unlock()
		return errClosed
	}
	e.inflight.Add(1)
	e.sendMu.Unlock()
	// No lock is held while the hand-over blocks: the writer may need the
	// engine's locks to finish the group before it takes the next one.
	e.ops <- o
	if e.onQueued != nil {
		e.onQueued()
	}
	e.inflight.Done()
	<-o.done
	return o.err
}

// groupYields is how many times the writer lets other goroutines run,
// when its queue is empty, before it commits a group: under load (the last
// group had more than one write) the handlers that are about to hand it a
// write get to, and the groups grow from about 3 writes to about 9, which
// cuts the writer's cost per write by a third (pages are spilled and
// written once per group). A lone client (groups of one) never waits.
const groupYields = 2

func (e *Engine) writer() {
	defer e.wg.Done()
	// The state file is memory-mapped: a damaged page read by a write must
	// fail that write (a panic, recovered below), not kill the process with
	// a fault.
	debug.SetPanicOnFault(true)
	batch := make([]*op, 0, 128)
	lastBatch := 0
	for o := range e.ops {
		if o.bulk != nil {
			e.runBulk(o)
			continue
		}
		batch = append(batch[:0], o)
		var next *op // a bulk write met while draining runs after the group
		yields := 0
	drain:
		for len(batch) < cap(batch) {
			select {
			case o2, ok := <-e.ops:
				if !ok {
					break drain
				}
				if o2.bulk != nil {
					next = o2
					break drain
				}
				batch = append(batch, o2)
			default:
				if yields < groupYields && lastBatch > 1 {
					yields++
					runtime.Gosched()
					continue
				}
				break drain
			}
		}
		lastBatch = len(batch)
		e.commit(batch)
		// The slice is reused: drop the finished writes, or their closures
		// (an upload's 10 MiB among them) would stay reachable until the
		// slots are overwritten.
		clear(batch)
		if next != nil {
			e.runBulk(next)
		}
	}
}

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

// call runs one write's function, turning a panic into its failure.
func (e *Engine) call(o *op, t *tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			o.panicked = true
			err = e.recovered(r, "a write")
		}
	}()
	return o.fn(t)
}

func (e *Engine) commit(batch []*op) {
	if ie := e.incomplete.Load(); ie != nil {
		for _, o := range batch {
			o.err = ie
			close(o.done)
		}
		return
	}
	var t *tx
	var err error
	for more := true; more; {
		err = func() (err error) {
			defer func() {
				if r := recover(); r != nil { // outside every write: applying due events, finishing, committing
					err = e.recovered(r, "a commit")
				}
			}()
			return e.db.Update(func(btx *bolt.Tx) error {
				t = e.newTx(btx)
				t.pack()
				t.deferWorkspaces = true
				var err error
				if more, err = t.applyDue(e.cfg.dueBatch); err != nil {
					return err
				}
				if more {
					// Too many events are due for one transaction: they are
					// applied in several, before the group's writes.
					return t.finish()
				}
				for _, o := range batch {
					o.err = e.call(o, t)
					if o.err != nil && !isBusiness(o.err) {
						return o.err
					}
				}
				return t.finish()
			})
		}()
		if err != nil {
			break
		}
		if more {
			if err := t.afterCommit(); err != nil {
				e.log.Error("after applying due events", "err", err)
			}
		}
	}
	e.commits.Add(1)
	switch {
	case err == nil:
		if err := t.afterCommit(); err != nil {
			for _, o := range batch {
				o.err = err
			}
		}
	case len(batch) > 1:
		// One write broke the group: run each alone so the others succeed.
		// One that panicked fails without running again.
		for _, o := range batch {
			if o.panicked {
				close(o.done)
				continue
			}
			e.commit([]*op{o})
		}
		return
	case batch[0].panicked || err == errPanic:
		batch[0].err = errPanic
	default:
		batch[0].err = fmt.Errorf("commit: %w", err)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// runBulk runs a bulk write with the state to itself: no reader sees the
// state while it is half-made.
func (e *Engine) runBulk(o *op) {
	e.state.Lock()
	defer e.state.Unlock()
	defer close(o.done)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = e.recovered(r, "a bulk write")
			}
		}()
		return o.bulk()
	}()
	e.commits.Add(1)
	if err == nil {
		e.incomplete.Store(nil)
		err = e.db.View(e.reload)
		e.hub.wakeAll()
		e.feed.replaced(e.clock.Now())
	} else if e.markedIncomplete() {
		e.log.Error("a bulk write failed half-way; the state is not served until it is reset", "err", err)
		e.incomplete.Store(&Error{Kind: EUNAVAILABLE, Code: "state_incomplete",
			Message: "A reset or restore failed half-way (" + err.Error() + "); reset the simulation or restart the server."})
	}
	o.err = err
}

// markedIncomplete reports whether the file holds an unfinished bulk write.
func (e *Engine) markedIncomplete() bool {
	var marked bool
	_ = e.db.View(func(btx *bolt.Tx) error {
		if meta := btx.Bucket(bMeta); meta == nil || meta.Get(keyIncomplete) != nil {
			marked = true
		}
		return nil
	})
	return marked
}
