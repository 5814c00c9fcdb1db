package store

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bulk writes replace the whole state: seeding (at first open, at open with
// a reset, on a reset), and restoring a snapshot.
//
// Bounded transactions. bbolt splits nodes only when a transaction commits,
// so every put into one huge transaction copies an ever-growing node: a
// million-record seed in one transaction is quadratic (hours). A bulk write
// commits every Batch records instead (Step), writing records in key order
// where it can (ids grow), so each transaction costs the same whatever the
// size of the state.
//
// The marker. The first transaction wipes the file and writes
// meta/incomplete (the kind of bulk write); the last one removes it, in the
// same commit as the last records (End). A process that dies in between
// leaves the marker in the file, and the owner's next open finds it
// (Condition.Unfinished) and seeds again: a half-made state is never
// served. (A restore cut short this way comes back as the seeded state:
// the snapshot was only ever in the request.)
//
// No interleaving. The owner runs a bulk write where nothing else writes
// (at open, or alone in the writer: Writer.Alone), and keeps its readers
// out until it ends.

// ErrStopped is what Step returns when BulkOptions.Stop closed.
var ErrStopped = errors.New("the bulk write was stopped")

// BulkOptions configure a bulk write.
type BulkOptions struct {
	// What is the kind of the bulk write (seed, reset, restore): the
	// marker's value, and the words of its progress reports.
	What string
	// Fingerprint is written to the meta bucket beside the schema version.
	Fingerprint string
	// Total is about how many records it writes, for the estimate of its
	// progress reports.
	Total int64
	// Batch is how many records one transaction takes; 0 means 4096.
	Batch int
	// Stop, when closed, stops the bulk write at its next commit: Step
	// returns ErrStopped, and the marker stays.
	Stop <-chan struct{}
	// Log receives its progress, once it has taken a second: every few
	// seconds while it runs, and once at the end. Nil discards it.
	Log *slog.Logger
	// WallClock reads the time of the progress reports; nil means
	// time.Now.
	WallClock func() time.Time
	// Began, when set, is told of each transaction the bulk write begins
	// (nil once it ends or fails): the owner's transaction follows it.
	Began func(*bolt.Tx)
}

// DefaultBatch is how many records a bulk write puts in one transaction,
// unless told otherwise.
const DefaultBatch = 4096

// Bulk is a bulk write under way: the transaction open now and its progress.
type Bulk struct {
	db      *DB
	o       BulkOptions
	tx      *bolt.Tx // changes at every commit
	n       int      // records in the open transaction
	done    int64    // records written so far
	commits int
	started time.Time
	logged  time.Time
}

// BulkStats says how much a bulk write wrote, in how many transactions.
type BulkStats struct {
	Records int64
	Commits int
}

// BeginBulk opens the first transaction of a bulk write: it wipes the
// file, writes the schema version, the fingerprint and the marker.
func (db *DB) BeginBulk(o BulkOptions) (*Bulk, error) {
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.WallClock == nil {
		o.WallClock = time.Now
	}
	btx, err := db.Begin(true)
	if err != nil {
		return nil, err
	}
	b := &Bulk{db: db, o: o, started: o.WallClock()}
	b.logged = b.started
	b.setTx(btx)
	err = db.wipe(btx)
	if err == nil {
		err = btx.Bucket(Meta).Put(KeyIncomplete, []byte(o.What))
	}
	if err == nil {
		err = btx.Bucket(Meta).Put(KeySchema, []byte(db.schema.Version))
	}
	if err == nil {
		err = btx.Bucket(Meta).Put(KeyFingerprint, []byte(o.Fingerprint))
	}
	if err != nil {
		b.Abort()
		return nil, err
	}
	b.fill()
	return b, nil
}

// Tx is the transaction open now; nil once the bulk write ended or failed.
func (b *Bulk) Tx() *bolt.Tx { return b.tx }

func (b *Bulk) setTx(btx *bolt.Tx) {
	b.tx = btx
	if b.o.Began != nil {
		b.o.Began(btx)
	}
}

// fill packs pages fully: a bulk write appends in key order, so half-empty
// pages (bbolt's default for random inserts) would only double the file.
func (b *Bulk) fill() {
	for _, name := range b.db.schema.Buckets {
		b.tx.Bucket(name).FillPercent = 1
	}
}

// Step counts one record written; a full transaction is committed and the
// next one begun.
func (b *Bulk) Step() error {
	b.n++
	b.done++
	if b.n < b.o.Batch {
		return nil
	}
	if err := b.tx.Commit(); err != nil {
		b.setTx(nil)
		return err
	}
	b.n = 0
	b.commits++
	if b.stopped() {
		b.setTx(nil)
		return ErrStopped
	}
	btx, err := b.db.Begin(true)
	if err != nil {
		b.setTx(nil)
		return err
	}
	b.setTx(btx)
	b.fill()
	b.progress(false)
	return nil
}

func (b *Bulk) stopped() bool {
	if b.o.Stop == nil {
		return false
	}
	select {
	case <-b.o.Stop:
		return true
	default:
		return false
	}
}

// Copy copies every bucket of src (a snapshot's read transaction) into the
// file, in key order, sequences included. The bytes of src stay valid while
// its transaction is open, which outlives every transaction they are put in.
func (b *Bulk) Copy(src *bolt.Tx) error {
	for _, name := range b.db.schema.Buckets {
		sb := src.Bucket(name)
		if sb == nil {
			continue
		}
		c := sb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := b.tx.Bucket(name).Put(k, v); err != nil {
				return fmt.Errorf("restore %s: %w", name, err)
			}
			if err := b.Step(); err != nil {
				return err
			}
		}
		if err := b.tx.Bucket(name).SetSequence(sb.Sequence()); err != nil {
			return err
		}
	}
	return nil
}

// End removes the marker and commits: the owner has finished its last
// transaction (its clock, its windows) before.
func (b *Bulk) End() error {
	if err := b.tx.Bucket(Meta).Delete(KeyIncomplete); err != nil {
		return err
	}
	err := b.tx.Commit()
	b.setTx(nil)
	if err != nil {
		return err
	}
	b.commits++
	b.db.lastBulk = BulkStats{Records: b.done, Commits: b.commits}
	b.progress(true)
	return nil
}

// Abort rolls back the open transaction, if any (what was committed stays,
// marker included).
func (b *Bulk) Abort() {
	if b.tx != nil {
		_ = b.tx.Rollback()
		b.setTx(nil)
	}
}

// progress logs how far a bulk write is, once it has taken a second: every
// few seconds while it runs, and once at the end.
func (b *Bulk) progress(final bool) {
	now := b.o.WallClock()
	elapsed := now.Sub(b.started)
	if elapsed < time.Second || (!final && now.Sub(b.logged) < 2*time.Second) {
		return
	}
	b.logged = now
	rate := float64(b.done) / elapsed.Seconds()
	attrs := []any{"records", b.done, "per_second", int64(rate), "elapsed", elapsed.Round(time.Millisecond)}
	if final {
		b.o.Log.Info(b.o.What+" done", attrs...)
		return
	}
	left := time.Duration(0)
	if rate > 0 && b.o.Total > b.done {
		left = time.Duration(float64(b.o.Total-b.done) / rate * float64(time.Second))
	}
	attrs = append(attrs, "of", b.o.Total, "left", left.Round(time.Second))
	b.o.Log.Info(b.o.What+" under way", attrs...)
}
