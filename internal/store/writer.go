package store

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Owner is what the writer asks of the owner of the state, for a write
// transaction of type T (the owner's transaction, carrying a *bolt.Tx and
// what it notes while it writes).
type Owner[T any] interface {
	// Begin makes the owner's transaction of btx, for a group.
	Begin(btx *bolt.Tx) T
	// Prepare runs first in each transaction of a group. more says it had
	// more to do than one transaction takes (due events after a clock
	// jump): that transaction is finished and committed without the
	// group's writes, and the group begins another.
	Prepare(t T) (more bool, err error)
	// Finish runs after the writes, before the commit.
	Finish(t T) error
	// Committed runs once the transaction is committed.
	Committed(t T) error
	// Refused, when not nil, fails every write without running it (the
	// state is not served).
	Refused() error
	// Own reports whether a write's error is the write's own (a business
	// error): it is reported to its caller, and the group still commits.
	// Every other error rolls the group back.
	Own(err error) bool
	// Panicked is the error a write (what is "a write") or a commit ("a
	// commit") that panicked fails with: it is rolled back and the writer
	// goes on. The owner logs it.
	Panicked(r any, what string) error
	// Closed is the error of a write handed over after Close.
	Closed() error
}

// op is one write waiting for the writer: fn runs in the group's
// transaction; alone, when set, runs by itself between groups.
type op[T any] struct {
	fn       func(T) error
	alone    func() error
	err      error
	done     chan struct{}
	panicked bool // fn panicked: it fails and is not run again
}

// Writer is the one goroutine that writes the state file. Writes are
// committed in groups: the writer takes every write waiting when it starts
// a transaction, so that one commit (and one fsync, when durable) serves
// many requests. A write that fails with an error of its own fails alone;
// one that fails otherwise or panics breaks the group, whose writes are
// then run again each alone, so that the others succeed.
type Writer[T any] struct {
	db    *DB
	owner Owner[T]
	log   *slog.Logger
	ops   chan *op[T]
	// OnQueued, when set (by tests, before any write), is told of each
	// write that joins the queue; it must not block.
	OnQueued func()

	wg       sync.WaitGroup
	sendMu   sync.Mutex // guards closing against new writes
	closing  bool
	inflight sync.WaitGroup // writes being handed to the writer
}

// NewWriter starts the writer of db for owner; log receives what it cannot
// hand back to a caller.
func NewWriter[T any](db *DB, owner Owner[T], log *slog.Logger) *Writer[T] {
	w := &Writer[T]{db: db, owner: owner, log: log, ops: make(chan *op[T], 1024)}
	w.wg.Add(1)
	go w.run()
	return w
}

// Update runs fn in a write transaction, in the next group.
//
// A function must not write before it returns an error of its own (Own):
// its error is reported to its caller while the group's transaction still
// commits.
func (w *Writer[T]) Update(fn func(T) error) error {
	return w.send(&op[T]{fn: fn, done: make(chan struct{})})
}

// Alone runs fn in the writer, by itself, between groups: no other write
// runs meanwhile (a bulk write commits its own transactions).
func (w *Writer[T]) Alone(fn func() error) error {
	return w.send(&op[T]{alone: fn, done: make(chan struct{})})
}

// Close waits for the writes already handed over, and stops the writer;
// a write handed over after fails with the owner's Closed.
func (w *Writer[T]) Close() {
	w.sendMu.Lock()
	if w.closing {
		w.sendMu.Unlock()
		return
	}
	w.closing = true
	w.sendMu.Unlock()
	w.inflight.Wait() // every write already accepted reaches the writer
	close(w.ops)
	w.wg.Wait()
}

func (w *Writer[T]) send(o *op[T]) error {
	w.sendMu.Lock()
	if w.closing {
		w.sendMu.Unlock()
		return w.owner.Closed()
	}
	w.inflight.Add(1)
	w.sendMu.Unlock()
	// No lock is held while the hand-over blocks: the writer may need the
	// owner's locks to finish the group before it takes the next one.
	w.ops <- o
	if w.OnQueued != nil {
		w.OnQueued()
	}
	w.inflight.Done()
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

func (w *Writer[T]) run() {
	defer w.wg.Done()
	// The state file is memory-mapped: a damaged page read by a write must
	// fail that write (a panic, recovered below), not kill the process with
	// a fault.
	debug.SetPanicOnFault(true)
	batch := make([]*op[T], 0, 128)
	lastBatch := 0
	for o := range w.ops {
		if o.alone != nil {
			w.runAlone(o)
			continue
		}
		batch = append(batch[:0], o)
		var next *op[T] // a write to run alone met while draining runs after the group
		yields := 0
	drain:
		for len(batch) < cap(batch) {
			select {
			case o2, ok := <-w.ops:
				if !ok {
					break drain
				}
				if o2.alone != nil {
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
		w.commit(batch)
		// The slice is reused: drop the finished writes, or their closures
		// (an upload's 10 MiB among them) would stay reachable until the
		// slots are overwritten.
		clear(batch)
		if next != nil {
			w.runAlone(next)
		}
	}
}

// call runs one write's function, turning a panic into its failure.
func (w *Writer[T]) call(o *op[T], t T) (err error) {
	defer func() {
		if r := recover(); r != nil {
			o.panicked = true
			err = w.owner.Panicked(r, "a write")
		}
	}()
	return o.fn(t)
}

func (w *Writer[T]) commit(batch []*op[T]) {
	if err := w.owner.Refused(); err != nil {
		for _, o := range batch {
			o.err = err
			close(o.done)
		}
		return
	}
	var t T
	var err error
	var panicked error // the commit itself panicked, outside every write
	for more := true; more; {
		err = func() (err error) {
			defer func() {
				if r := recover(); r != nil { // outside every write: preparing, finishing, committing
					panicked = w.owner.Panicked(r, "a commit")
					err = panicked
				}
			}()
			return w.db.Update(func(btx *bolt.Tx) error {
				t = w.owner.Begin(btx)
				var err error
				if more, err = w.owner.Prepare(t); err != nil {
					return err
				}
				if more {
					// Too much is due for one transaction: it is done in
					// several, before the group's writes.
					return w.owner.Finish(t)
				}
				for _, o := range batch {
					o.err = w.call(o, t)
					if o.err != nil && !w.owner.Own(o.err) {
						return o.err
					}
				}
				return w.owner.Finish(t)
			})
		}()
		if err != nil {
			break
		}
		if more {
			if err := w.owner.Committed(t); err != nil {
				w.log.Error("after applying due events", "err", err)
			}
		}
	}
	w.db.commits.Add(1)
	switch {
	case err == nil:
		if err := w.owner.Committed(t); err != nil {
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
			w.commit([]*op[T]{o})
		}
		return
	case batch[0].panicked:
		// batch[0].err is what its panic became
	case panicked != nil:
		batch[0].err = panicked
	default:
		batch[0].err = fmt.Errorf("commit: %w", err)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// runAlone runs a write that runs by itself; a panic fails it (the owner's
// function recovers its own, to clean up: this is the writer's guard).
func (w *Writer[T]) runAlone(o *op[T]) {
	defer close(o.done)
	o.err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = w.owner.Panicked(r, "a bulk write")
			}
		}()
		return o.alone()
	}()
}
