package sim

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// Bulk writes replace the whole state: seeding from the fixtures (at first
// open, at open with Reset, and on Reset), and restoring a snapshot.
//
// Bounded transactions. bbolt splits nodes only when a transaction commits,
// so every put into one huge transaction copies an ever-growing node: a
// million-asset seed in one transaction is quadratic (hours). A bulk write
// commits every batchSize records instead, writing records in key order
// where it can (ids grow), so each transaction costs the same whatever the
// size of the state.
//
// The marker. The first transaction wipes the file and writes
// meta/incomplete (the kind of bulk write); the last one removes it, in the
// same commit as the last records. A process that dies in between leaves the
// marker in the file, and the next Open wipes and seeds again from the
// fixtures: a half-made state is never served. (A restore cut short this way
// comes back as the fixtures' state: the snapshot was only ever in the
// request.)
//
// No interleaving. At Open nothing else runs yet. At run time a bulk write is
// an op of the writer goroutine, the only goroutine that writes: no other
// write can slip in between its transactions. It also holds Engine.state
// exclusively, which every read takes shared (view, Snapshot, file reads), so
// readers wait for the new state to be complete, then see all of it. Reads
// waiting is the price: a reset of a million assets makes requests wait for
// seconds, never answer from half a library. (Building the new state in a
// second file and swapping files would let reads go on meanwhile, but every
// reader would then need to follow a changing *bolt.DB, under the same lock.)
// Should a bulk write fail half-way, the engine answers EUNAVAILABLE until a
// Reset or a restart seeds it again.
//
// The other writes that could grow without bound: due events after a clock
// jump are applied dueBatch per transaction (Engine.commit); monthly gifts
// renew lazily, per workspace, when used or read (no sweep over workspaces);
// there is no migration (a file of another schema is refused at open); a
// workspace added by the control API comes without collections, a few
// records in one ordinary write.

// ErrStopped is returned by Open when Config.Stop closed before the seed
// was complete; the fixtures' loader gives up with the same error.
var ErrStopped = fixtures.ErrStopped

// bulkBatch is how many records a bulk write puts in one transaction.
const bulkBatch = 4096

// keyIncomplete marks a state that a bulk write has not finished.
var keyIncomplete = []byte("incomplete")

// bulk is a bulk write under way: the transaction open now and its progress.
type bulk struct {
	e       *Engine
	t       *tx // its Tx changes at every commit
	what    string
	n       int   // records in the open transaction
	done    int64 // records written so far
	commits int
	total   int64 // records expected, for the estimate
	started time.Time
	logged  time.Time
}

// beginBulk opens the first transaction of a bulk write: it wipes the file,
// writes the schema, fingerprint and marker, and the epoch when not 0.
func (e *Engine) beginBulk(what string, total int64, now time.Time, epoch uint64) (*bulk, error) {
	btx, err := e.db.Begin(true)
	if err != nil {
		return nil, err
	}
	b := &bulk{e: e, t: &tx{Tx: btx, e: e, now: now}, what: what, total: total, started: e.cfg.WallClock()}
	b.t.bulk = b
	b.logged = b.started
	err = wipe(btx)
	if err == nil {
		err = btx.Bucket(bMeta).Put(keyIncomplete, []byte(what))
	}
	if err == nil {
		err = b.t.writeMeta()
	}
	if err == nil && epoch > 0 {
		err = btx.Bucket(bMeta).Put([]byte("epoch"), u64(epoch))
	}
	if err != nil {
		b.abort()
		return nil, err
	}
	b.fill()
	return b, nil
}

// fill packs pages fully: a bulk write appends in key order, so half-empty
// pages (bbolt's default for random inserts) would only double the file.
func (b *bulk) fill() {
	for _, name := range allBuckets {
		b.t.Bucket(name).FillPercent = 1
	}
}

// step counts one record written; a full transaction is committed and the
// next one begun.
func (t *tx) step() error {
	if t.bulk == nil {
		return nil
	}
	b := t.bulk
	b.n++
	b.done++
	if b.n < b.e.cfg.batchSize {
		return nil
	}
	if err := b.t.Tx.Commit(); err != nil {
		b.t.Tx = nil
		return err
	}
	b.n = 0
	b.commits++
	if b.stopped() {
		b.t.Tx = nil
		return ErrStopped
	}
	btx, err := b.e.db.Begin(true)
	if err != nil {
		b.t.Tx = nil
		return err
	}
	b.t.Tx = btx
	b.fill()
	b.progress(false)
	return nil
}

// stopped says whether Config.Stop asks the bulk write to stop. Only
// Open's seed listens: a reset or a restore at run time goes to its end.
func (b *bulk) stopped() bool {
	if b.what != "seed" || b.e.cfg.Stop == nil {
		return false
	}
	select {
	case <-b.e.cfg.Stop:
		return true
	default:
		return false
	}
}

// end saves the clock and rate windows, removes the marker and commits.
func (b *bulk) end() error {
	t := b.t
	if err := t.finish(); err != nil {
		return err
	}
	if err := t.b(bMeta).Delete(keyIncomplete); err != nil {
		return err
	}
	err := t.Tx.Commit()
	t.Tx = nil
	if err != nil {
		return err
	}
	b.commits++
	b.e.lastBulk = bulkStats{records: b.done, commits: b.commits}
	b.progress(true)
	return nil
}

// bulkStats says how much a bulk write wrote, in how many transactions.
type bulkStats struct {
	records int64
	commits int
}

// abort rolls back the open transaction, if any (what was committed stays,
// marker included).
func (b *bulk) abort() {
	if b.t.Tx != nil {
		_ = b.t.Tx.Rollback()
		b.t.Tx = nil
	}
}

// progress logs how far a bulk write is, once it has taken a second: every
// few seconds while it runs, and once at the end.
func (b *bulk) progress(final bool) {
	now := b.e.cfg.WallClock()
	elapsed := now.Sub(b.started)
	if elapsed < time.Second || (!final && now.Sub(b.logged) < 2*time.Second) {
		return
	}
	b.logged = now
	rate := float64(b.done) / elapsed.Seconds()
	attrs := []any{"records", b.done, "per_second", int64(rate), "elapsed", elapsed.Round(time.Millisecond)}
	if final {
		b.e.log.Info(b.what+" done", attrs...)
		return
	}
	left := time.Duration(0)
	if rate > 0 && b.total > b.done {
		left = time.Duration(float64(b.total-b.done) / rate * float64(time.Second))
	}
	attrs = append(attrs, "of", b.total, "left", left.Round(time.Second))
	b.e.log.Info(b.what+" under way", attrs...)
}

// seedState wipes the file and seeds it from the fixtures in bounded
// transactions. The caller makes sure nothing else reads or writes meanwhile.
func (e *Engine) seedState(what string, epoch uint64) error {
	total := e.worldRecords()
	e.log.Debug(what+" begins", "records", total)
	b, err := e.beginBulk(what, total, e.clock.Now(), epoch)
	if err != nil {
		return err
	}
	defer b.abort()
	if err := b.t.seed(); err != nil {
		return err
	}
	return b.end()
}

// worldRecords is about how many records seeding the fixtures writes.
func (e *Engine) worldRecords() int64 {
	var n int64
	for _, ws := range e.world.Workspaces {
		n += 2 + int64(len(ws.APIKeys)+len(ws.OAuthTokens)+len(ws.BrandKits.Items)+len(ws.Projects.Items)+
			len(ws.Characters.Items)+len(ws.SocialAccounts.Items)+ws.Assets.Len())
	}
	return n
}

func wipe(btx *bolt.Tx) error {
	for _, name := range allBuckets {
		if btx.Bucket(name) != nil {
			if err := btx.DeleteBucket(name); err != nil {
				return fmt.Errorf("wipe %s: %w", name, err)
			}
		}
		if _, err := btx.CreateBucket(name); err != nil {
			return fmt.Errorf("wipe %s: %w", name, err)
		}
	}
	return nil
}
