package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/mediamock/mediamock/fixtures"
)

// Config configures an Engine. Path, World and Clock are required.
type Config struct {
	// Path is the bbolt file. It is created and seeded from World when new.
	Path string
	// Durable makes every commit reach the disk (fsync) before it is
	// acknowledged; otherwise commits skip fsync (ephemeral).
	Durable bool
	// Reset wipes the file and seeds it again from World.
	Reset bool
	// Seed drives every random choice.
	Seed uint64
	// World is the resolved fixture the file is seeded from.
	World *fixtures.World
	// Clock is the one clock of the simulation.
	Clock *Clock
	// Speed divides every simulated duration (job timings, publishing);
	// 0 means 1.
	Speed float64
	// Images resolves image URLs (uploads, references, Encore photos).
	// Nil resolves every https URL to a placeholder image.
	Images ImageResolver
	// Log receives what the engine has to report; nil discards it.
	Log *slog.Logger
}

// Engine is the simulated service: state, clock, credits, limits and
// lifecycles. It is safe for concurrent use.
type Engine struct {
	db      *bolt.DB
	cfg     Config
	clock   *Clock
	seed    uint64
	speed   float64
	world   *fixtures.World
	models  map[string]*fixtures.Model
	effects map[string]*fixtures.Effect
	images  ImageResolver

	ops      chan *op
	closed   chan struct{}
	wg       sync.WaitGroup
	mu       sync.RWMutex // guards tokens and workspaces
	sendMu   sync.Mutex   // guards closing against new writes
	closing  bool
	inflight sync.WaitGroup // writes being handed to the writer

	tokens     map[string]Token
	workspaces map[uint64]*Workspace // immutable snapshots of name, plan, limits

	nextDue    atomic.Int64 // unix nanos of the earliest pending event; MaxInt64 when none
	dueChanged chan struct{}
	dueMu      sync.Mutex

	rate  *rateLimiter
	hub   *hub
	cov   coverage
	epoch atomic.Uint64 // resets and restores so far; part of file addresses
	log   *slog.Logger
}

// Open opens (or creates and seeds) the simulation in cfg.Path.
func Open(cfg Config) (*Engine, error) {
	if cfg.World == nil || cfg.Clock == nil || cfg.Path == "" {
		return nil, errors.New("sim: Config needs Path, World and Clock")
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.Images == nil {
		cfg.Images = OfflineImages{Seed: cfg.Seed}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	db, err := bolt.Open(cfg.Path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: !cfg.Durable, NoFreelistSync: true, InitialMmapSize: 64 << 20})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: the file is in use by another process", cfg.Path)
		}
		return nil, fmt.Errorf("open %s: %w", cfg.Path, err)
	}
	e := &Engine{
		db: db, cfg: cfg, clock: cfg.Clock, seed: cfg.Seed, speed: cfg.Speed, world: cfg.World,
		images: cfg.Images, log: cfg.Log, ops: make(chan *op, 1024), closed: make(chan struct{}),
		dueChanged: make(chan struct{}), rate: newRateLimiter(), hub: newHub(),
	}
	e.indexCatalog()
	if err := e.load(cfg.Reset); err != nil {
		db.Close()
		return nil, err
	}
	e.wg.Add(1)
	go e.writer()
	return e, nil
}

func (e *Engine) indexCatalog() {
	e.models = make(map[string]*fixtures.Model, len(e.world.Models))
	for i := range e.world.Models {
		e.models[e.world.Models[i].ID] = &e.world.Models[i]
	}
	e.effects = make(map[string]*fixtures.Effect, len(e.world.EncoreEffects))
	for i := range e.world.EncoreEffects {
		e.effects[e.world.EncoreEffects[i].Slug] = &e.world.EncoreEffects[i]
	}
}

// load seeds a new (or reset) file, or checks and loads an existing one.
func (e *Engine) load(reset bool) error {
	fp := e.fingerprint()
	var fresh bool
	err := e.db.Update(func(btx *bolt.Tx) error {
		if reset {
			for _, name := range allBuckets {
				if btx.Bucket(name) != nil {
					if err := btx.DeleteBucket(name); err != nil {
						return err
					}
				}
			}
		}
		meta := btx.Bucket(bMeta)
		if meta == nil {
			fresh = true
			for _, name := range allBuckets {
				if _, err := btx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			t := e.newTx(btx)
			if err := t.writeMeta(); err != nil {
				return err
			}
			return t.seed()
		}
		if v := string(meta.Get([]byte("schema"))); v != schemaVersion {
			return fmt.Errorf("%s has state schema %q; this version needs %q: remove the file or reset it", e.cfg.Path, v, schemaVersion)
		}
		if v := string(meta.Get([]byte("fingerprint"))); v != fp {
			return fmt.Errorf("%s was seeded from other fixtures or another seed: remove the file or reset it", e.cfg.Path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return e.db.View(func(btx *bolt.Tx) error {
		if !fresh {
			if v := btx.Bucket(bMeta).Get([]byte("clock")); v != nil {
				e.clock.restore(Stamp(getU64(v)).Time())
			}
		}
		e.publishNextDue(firstDue(btx))
		e.epoch.Store(readEpoch(btx))
		if err := e.rate.load(btx); err != nil {
			return err
		}
		return e.loadPrincipals(btx)
	})
}

// Close stops the engine: it waits for queued writes, saves the clock and
// the rate windows, and closes the file.
func (e *Engine) Close() error {
	e.sendMu.Lock()
	if e.closing {
		e.sendMu.Unlock()
		return nil
	}
	e.closing = true
	e.sendMu.Unlock()
	e.inflight.Wait() // every write already accepted reaches the writer
	close(e.ops)
	e.wg.Wait()
	close(e.closed)
	err := e.db.Update(func(btx *bolt.Tx) error {
		t := e.newTx(btx)
		return t.finish()
	})
	if cerr := e.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Clock returns the engine's clock.
func (e *Engine) Clock() *Clock { return e.clock }

// Seed is the seed every random choice derives from.
func (e *Engine) Seed() uint64 { return e.seed }

// World returns the fixture the engine was seeded from.
func (e *Engine) World() *fixtures.World { return e.world }

var errClosed = &Error{Kind: EUNAVAILABLE, Code: "service_unavailable", Message: "The server is shutting down."}

// op is one write waiting for the writer.
type op struct {
	fn   func(*tx) error
	err  error
	done chan struct{}
}

// update runs fn in a write transaction. Writes are committed in groups: the
// writer takes every write waiting when it starts a transaction, so that one
// commit (and one fsync, when durable) serves many requests.
//
// A function must not write before it returns an *Error: its business error
// is reported to its caller while the group's transaction still commits.
func (e *Engine) update(fn func(*tx) error) error {
	o := &op{fn: fn, done: make(chan struct{})}
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
	e.inflight.Done()
	<-o.done
	return o.err
}

func (e *Engine) writer() {
	defer e.wg.Done()
	batch := make([]*op, 0, 128)
	for o := range e.ops {
		batch = append(batch[:0], o)
	drain:
		for len(batch) < cap(batch) {
			select {
			case o2, ok := <-e.ops:
				if !ok {
					break drain
				}
				batch = append(batch, o2)
			default:
				break drain
			}
		}
		e.commit(batch)
	}
}

func isBusiness(err error) bool {
	var be *Error
	return errors.As(err, &be) && be.Kind != EINTERNAL
}

func (e *Engine) commit(batch []*op) {
	var t *tx
	err := e.db.Update(func(btx *bolt.Tx) error {
		t = e.newTx(btx)
		if err := t.applyDue(); err != nil {
			return err
		}
		for _, o := range batch {
			o.err = o.fn(t)
			if o.err != nil && !isBusiness(o.err) {
				return o.err
			}
		}
		return t.finish()
	})
	switch {
	case err == nil:
		if err := t.afterCommit(); err != nil {
			for _, o := range batch {
				o.err = err
			}
		}
	case len(batch) > 1:
		// One write broke the group: run each alone so the others succeed.
		for _, o := range batch {
			e.commit([]*op{o})
		}
		return
	default:
		batch[0].err = fmt.Errorf("commit: %w", err)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// view runs fn in a read transaction, after applying whatever is due.
func (e *Engine) view(fn func(*tx) error) error {
	if err := e.settle(); err != nil {
		return err
	}
	return e.db.View(func(btx *bolt.Tx) error {
		return fn(e.newTx(btx))
	})
}

// settle applies every event due by now, if any.
func (e *Engine) settle() error {
	if e.nextDue.Load() > e.clock.Now().UnixNano() {
		return nil
	}
	return e.update(func(*tx) error { return nil })
}

// Settle applies every event due by the clock's current time. Drivers of a
// real clock call it when NextDue has passed.
func (e *Engine) Settle() error { return e.settle() }

// NextDue returns when the earliest pending event is due, and a channel
// closed when that changes.
func (e *Engine) NextDue() (time.Time, bool, <-chan struct{}) {
	e.dueMu.Lock()
	ch := e.dueChanged
	e.dueMu.Unlock()
	n := e.nextDue.Load()
	if n == noDue {
		return time.Time{}, false, ch
	}
	return Stamp(n).Time(), true, ch
}

const noDue = int64(^uint64(0) >> 1)

// firstDue reads when the earliest pending event is due (noDue when none).
func firstDue(btx *bolt.Tx) int64 {
	if k, _ := btx.Bucket(bDue).Cursor().First(); k != nil {
		return int64(getU64(k[:8]))
	}
	return noDue
}

// publishNextDue records when the earliest pending event is due and wakes
// whoever waits for that to change.
func (e *Engine) publishNextDue(n int64) {
	if e.nextDue.Swap(n) != n {
		e.dueMu.Lock()
		close(e.dueChanged)
		e.dueChanged = make(chan struct{})
		e.dueMu.Unlock()
	}
}

// Advance moves the clock forward by d and applies everything due, in order.
func (e *Engine) Advance(d time.Duration) (time.Time, error) {
	t, err := e.clock.advance(d)
	if err != nil {
		return time.Time{}, &Error{Kind: EINVALID, Code: "invalid_clock_move", Message: err.Error()}
	}
	return t, e.settle()
}

// SetTime moves the clock to t (never backwards) and applies everything due.
func (e *Engine) SetTime(t time.Time) error {
	if err := e.clock.set(t); err != nil {
		return &Error{Kind: EINVALID, Code: "invalid_clock_move", Message: err.Error()}
	}
	return e.settle()
}

// advanceTo moves the clock to t if it is later, and applies what is due.
func (e *Engine) advanceTo(t time.Time) error {
	e.clock.advanceTo(t)
	return e.settle()
}

// tx is one transaction with the helpers of the engine.
type tx struct {
	*bolt.Tx
	e       *Engine
	now     time.Time
	changed map[uint64]bool // jobs whose state changed, to wake waiters
	nextDue int64           // the earliest pending event when the transaction ended
	notes   map[string]int  // lifecycle paths taken, counted once committed

	reloadPrincipals bool   // tokens or workspaces changed
	replaced         bool   // the whole state was replaced (reset, restore)
	epoch            uint64 // the new epoch, when replaced
}

func (e *Engine) newTx(btx *bolt.Tx) *tx {
	return &tx{Tx: btx, e: e, now: e.clock.Now()}
}

func (t *tx) b(name []byte) *bolt.Bucket { return t.Bucket(name) }

func (t *tx) touch(jobID uint64) {
	if t.changed == nil {
		t.changed = map[uint64]bool{}
	}
	t.changed[jobID] = true
}

// finish saves the clock and the rate windows, and notes the next due event.
func (t *tx) finish() error {
	t.nextDue = firstDue(t.Tx)
	if err := t.b(bMeta).Put([]byte("clock"), u64(uint64(t.now.UnixNano()))); err != nil {
		return err
	}
	return t.e.rate.flush(t)
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
	if t.replaced || t.reloadPrincipals {
		err := e.db.View(func(btx *bolt.Tx) error {
			if t.replaced {
				if err := e.rate.load(btx); err != nil {
					return err
				}
			}
			return e.loadPrincipals(btx)
		})
		if err != nil {
			return fmt.Errorf("reload state after commit: %w", err)
		}
	}
	if t.replaced {
		e.hub.wakeAll()
		e.epoch.Store(t.epoch)
	}
	return nil
}

func readEpoch(btx *bolt.Tx) uint64 {
	if v := btx.Bucket(bMeta).Get([]byte("epoch")); v != nil {
		return getU64(v)
	}
	return 0
}

// Event is work due at a time.
type Event struct {
	Kind string `json:"kind"` // job.process, job.finish, pub.start, pub.deliver
	ID   uint64 `json:"id"`
	Sub  int    `json:"sub,omitempty"`
}

// schedule stores ev, due at at, and returns its key.
func (t *tx) schedule(at time.Time, ev Event) ([]byte, error) {
	b := t.b(bDue)
	seq, err := b.NextSequence()
	if err != nil {
		return nil, err
	}
	k := key(uint64(at.UnixNano()), seq)
	return k, putJSON(b, k, ev)
}

func (t *tx) unschedule(k []byte) error {
	if k == nil {
		return nil
	}
	return t.b(bDue).Delete(k)
}

// applyDue applies every event due by t.now, in order of due time. Each runs
// at its own due time, so timestamps are those of a life lived in real time.
func (t *tx) applyDue() error {
	now := t.now
	defer func() { t.now = now }()
	b := t.b(bDue)
	for {
		k, v := b.Cursor().First()
		if k == nil || int64(getU64(k[:8])) > now.UnixNano() {
			return nil
		}
		var ev Event
		if err := jsonUnmarshal(v, &ev); err != nil {
			return err
		}
		kc := bytes.Clone(k)
		if err := b.Delete(kc); err != nil {
			return err
		}
		t.now = Stamp(getU64(kc[:8])).Time()
		if err := t.apply(kc, ev); err != nil {
			// A damaged record must not stop the simulation: the event is
			// dropped and said so.
			t.e.log.Error("dropped an event that cannot be applied", "event", ev.Kind, "id", ev.ID, "err", err)
		}
	}
}

func (t *tx) apply(k []byte, ev Event) error {
	switch ev.Kind {
	case "job.process", "job.finish":
		return t.stepJob(k, ev)
	case "pub.start", "pub.deliver":
		return t.stepPublication(ev)
	}
	return fmt.Errorf("unknown event kind %q", ev.Kind)
}

// Wait blocks until ch is closed, the clock jumps, or ctx ends.
func (e *Engine) waitChange(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-e.clock.Changed():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.closed:
		return errClosed
	}
}
