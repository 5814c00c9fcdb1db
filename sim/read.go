package sim

import (
	bolt "go.etcd.io/bbolt"
)

// view runs fn in a read transaction, after applying whatever is due.
func (e *Engine) view(fn func(*tx) error) error {
	if err := e.settle(); err != nil {
		return err
	}
	return e.read(func(btx *bolt.Tx) error {
		return fn(e.newTx(btx))
	})
}

// read runs fn in a read transaction of a complete state: it waits while a
// bulk write (reset, restore) is under way, and fails while the state is
// incomplete after one failed.
func (e *Engine) read(fn func(*bolt.Tx) error) error {
	e.state.RLock()
	defer e.state.RUnlock()
	if ie := e.incomplete.Load(); ie != nil {
		return ie
	}
	return e.db.View(fn)
}
