package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/seed"
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
	// FileSecret, when set, is mixed into the tokens of file addresses, so
	// that they cannot be computed from the seed.
	FileSecret string
	// WallClock reads the wall clock for progress reports of long bulk
	// writes (seeding, restoring), never for the simulation; nil means
	// time.Now.
	WallClock func() time.Time

	batchSize int // records per transaction of a bulk write; 0 means bulkBatch
	dueBatch  int // due events one transaction applies; 0 means dueBatch
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
	state    sync.RWMutex // readers share it; a bulk write (reset, restore) holds it alone
	sendMu   sync.Mutex   // guards closing against new writes
	closing  bool
	inflight sync.WaitGroup // writes being handed to the writer

	tokens     map[string]Token
	workspaces map[uint64]*Workspace // immutable snapshots of name, plan, limits

	nextDue    atomic.Int64 // unix nanos of the earliest pending event; MaxInt64 when none
	dueChanged chan struct{}
	dueMu      sync.Mutex

	rate       *rateLimiter
	hub        *hub
	feed       feed // committed changes, for subscribers
	cov        coverage
	epoch      atomic.Uint64 // resets and restores so far; part of file addresses
	commits    atomic.Uint64 // write transactions committed
	released   atomic.Uint64 // commits when the mapped pages were last released
	fileSecret uint64        // mixed into file tokens
	log        *slog.Logger

	// incomplete is set when a bulk write failed half-way: the state is not
	// served until a reset (or a restart) seeds it again.
	incomplete atomic.Pointer[Error]
	lastBulk   bulkStats // of the last bulk write that finished, for tests and benchmarks
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
	if cfg.WallClock == nil {
		cfg.WallClock = time.Now
	}
	if cfg.batchSize <= 0 {
		cfg.batchSize = bulkBatch
	}
	if cfg.dueBatch <= 0 {
		cfg.dueBatch = dueBatch
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
	if cfg.FileSecret != "" {
		e.fileSecret = seed.Hash(cfg.FileSecret) | 1
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

// load seeds a new (or reset) file, or checks and loads an existing one. A
// file whose last bulk write (seed, reset or restore) did not finish is
// never served half-made: it is wiped and seeded again from the fixtures.
func (e *Engine) load(reset bool) error {
	fp := e.fingerprint()
	var fresh bool
	var unfinished string
	var epoch uint64
	err := e.db.View(func(btx *bolt.Tx) error {
		meta := btx.Bucket(bMeta)
		switch {
		case meta == nil:
			fresh = true
			return nil
		case meta.Get(keyIncomplete) != nil:
			unfinished = string(meta.Get(keyIncomplete))
			if v := meta.Get([]byte("epoch")); len(v) == 8 {
				epoch = getU64(v) + 1 // addresses handed out before stay dead
			}
			return nil
		case reset:
			return nil
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
	if unfinished != "" {
		e.log.Warn("the state file holds an unfinished "+unfinished+"; seeding it again from the fixtures", "path", e.cfg.Path)
	}
	if fresh || reset || unfinished != "" {
		if err := e.seedState("seed", epoch); err != nil {
			return fmt.Errorf("seed %s: %w", e.cfg.Path, err)
		}
		fresh = true
	}
	return e.db.View(func(btx *bolt.Tx) error {
		if !fresh {
			if v := btx.Bucket(bMeta).Get([]byte("clock")); len(v) == 8 {
				e.clock.restore(Stamp(getU64(v)).Time())
			}
		}
		return e.reload(btx)
	})
}

// reload reads what the engine keeps in memory from the state: the next due
// event, the epoch, the rate windows, the tokens and workspaces.
func (e *Engine) reload(btx *bolt.Tx) error {
	e.publishNextDue(firstDue(btx))
	e.epoch.Store(readEpoch(btx))
	if err := e.rate.load(btx); err != nil {
		return err
	}
	return e.loadPrincipals(btx)
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

// dueBatch bounds the due events one transaction applies: a clock jump over
// many pending jobs is applied in several transactions.
const dueBatch = 4096

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
	changes []Change        // what subscribers hear once committed

	reloadPrincipals bool         // tokens or workspaces changed: reload them all
	addedTokens      []Token      // tokens added: cached once committed
	addedWorkspaces  []*Workspace // workspaces added: cached once committed
	bulk             *bulk        // the bulk write this transaction is part of, if any
}

func (e *Engine) newTx(btx *bolt.Tx) *tx {
	return &tx{Tx: btx, e: e, now: e.clock.Now()}
}

func (t *tx) b(name []byte) *bolt.Bucket { return t.Bucket(name) }

// pack fills the pages of the append-only buckets whole in this write. The
// setting lives on the transaction's bucket handles, which bbolt keeps for
// the transaction.
func (t *tx) pack() {
	for _, name := range appendOnly {
		if b := t.Bucket(name); b != nil {
			b.FillPercent = 1
		}
	}
}

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
	if t.reloadPrincipals {
		if err := e.db.View(e.loadPrincipals); err != nil {
			return fmt.Errorf("reload state after commit: %w", err)
		}
	} else if len(t.addedTokens) > 0 || len(t.addedWorkspaces) > 0 {
		// Adding one costs the same at 1 and at 10,000 workspaces.
		e.mu.Lock()
		for _, w := range t.addedWorkspaces {
			e.workspaces[w.ID] = &Workspace{ID: w.ID, Name: w.Name, Plan: w.Plan, RateLimit: w.RateLimit, PublishingAllowed: w.PublishingAllowed}
		}
		for _, tok := range t.addedTokens {
			e.tokens[tok.Token] = tok
		}
		e.mu.Unlock()
	}
	t.publishChanges()
	return nil
}

func readEpoch(btx *bolt.Tx) uint64 {
	if v := btx.Bucket(bMeta).Get([]byte("epoch")); len(v) == 8 {
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

// applyDue applies the events due by t.now, in order of due time, at most
// limit of them, and reports whether more are due. Each runs at its own due
// time, so timestamps are those of a life lived in real time.
func (t *tx) applyDue(limit int) (more bool, err error) {
	now := t.now
	defer func() { t.now = now }()
	b := t.b(bDue)
	for n := 0; ; n++ {
		k, v := b.Cursor().First()
		if k == nil || len(k) < 8 || int64(getU64(k[:8])) > now.UnixNano() {
			return false, nil
		}
		if n == limit {
			return true, nil
		}
		kc := bytes.Clone(k)
		var ev Event
		err := jsonUnmarshal(v, &ev)
		if err := b.Delete(kc); err != nil {
			return false, err
		}
		t.now = Stamp(getU64(kc[:8])).Time()
		if err == nil {
			err = t.applySafely(kc, ev)
		}
		if err != nil {
			// A damaged record must not stop the simulation: the event is
			// dropped and said so.
			t.e.log.Error("dropped an event that cannot be applied", "event", ev.Kind, "id", ev.ID, "err", err)
		}
	}
}

// applySafely applies one event; a panic is the event's failure.
func (t *tx) applySafely(k []byte, ev Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return t.apply(k, ev)
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
