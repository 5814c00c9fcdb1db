package sim

import (
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
)

// Bulk writes replace the whole state: seeding from the fixtures (at first
// open, at open with Reset, and on Reset), and restoring a snapshot. They
// commit in bounded transactions behind a marker of an unfinished state
// (store.Bulk says how); the engine adds who runs them and what readers see.
//
// No interleaving. At Open nothing else runs yet. At run time a bulk write is
// an op of the writer goroutine run alone (store.Writer.Alone), the only
// goroutine that writes: no other write can slip in between its
// transactions. It also holds Engine.state exclusively, which every read
// takes shared (view, Snapshot, file reads), so readers wait for the new
// state to be complete, then see all of it. Reads waiting is the price: a
// reset of a million assets makes requests wait for seconds, never answer
// from half a library. (Building the new state in a second file and
// swapping files would let reads go on meanwhile, but every reader would
// then need to follow a changing *bolt.DB, under the same lock.) Should a
// bulk write fail half-way, the engine answers EUNAVAILABLE until a Reset or
// a restart seeds it again; a process that dies half-way leaves the marker,
// and the next Open seeds again from the fixtures.
//
// The other writes that could grow without bound: due events after a clock
// jump are applied dueBatch per transaction (writerOwner.Prepare); monthly
// gifts renew lazily, per workspace, when used or read (no sweep over
// workspaces); there is no migration (a file of another schema is refused
// at open); a workspace added by the control API comes without
// collections, a few records in one ordinary write.

// ErrStopped is returned by Open when Config.Stop closed before the seed
// was complete; the fixtures' loader gives up with the same error.
var ErrStopped = fixtures.ErrStopped

// bulk is a bulk write under way: the store's, and the engine's
// transaction that follows its transactions.
type bulk struct {
	*store.Bulk
	t *tx
}

// beginBulk opens the first transaction of a bulk write: it wipes the file,
// writes the schema, fingerprint and marker, and the epoch when not 0.
func (e *Engine) beginBulk(what string, total int64, now time.Time, epoch uint64) (*bulk, error) {
	b := &bulk{t: &tx{e: e, now: now}}
	b.t.bulk = b
	var stop <-chan struct{}
	if what == "seed" { // only Open's seed listens: a reset or a restore at run time goes to its end
		stop = e.cfg.Stop
	}
	sb, err := e.db.BeginBulk(store.BulkOptions{What: what, Fingerprint: e.fingerprint(), Total: total,
		Batch: e.cfg.batchSize, Stop: stop, Log: e.log, WallClock: e.cfg.WallClock,
		Began: func(btx *bolt.Tx) { b.t.Tx = btx }})
	if err != nil {
		return nil, err
	}
	b.Bulk = sb
	if epoch > 0 {
		if err := b.t.b(bMeta).Put([]byte("epoch"), u64(epoch)); err != nil {
			b.Abort()
			return nil, err
		}
	}
	return b, nil
}

// step counts one record written; a full transaction is committed and the
// next one begun. Outside a bulk write it does nothing.
func (t *tx) step() error {
	if t.bulk == nil {
		return nil
	}
	err := t.bulk.Step()
	if errors.Is(err, store.ErrStopped) {
		return ErrStopped
	}
	return err
}

// end saves the clock and rate windows, removes the marker and commits.
func (b *bulk) end() error {
	if err := b.t.finish(); err != nil {
		return err
	}
	return b.End()
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
	defer b.Abort()
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
