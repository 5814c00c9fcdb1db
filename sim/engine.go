package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/store"
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
	// FileSecret, when set, keys the tokens of file addresses and the
	// signatures of expiring ones (by HMAC), so that they cannot be
	// computed from the seed.
	FileSecret string
	// WallClock reads the wall clock for progress reports of long bulk
	// writes (seeding, restoring), never for the simulation; nil means
	// time.Now.
	WallClock func() time.Time
	// Fates decides the injected failures of jobs and deliveries: the
	// server's fault rules. Nil injects none.
	Fates Fates
	// Stop, when closed while Open seeds the file, stops the seed at its
	// next commit (a batch of records, tens of milliseconds): Open returns
	// an error wrapping ErrStopped, and the file keeps its marker of an
	// unfinished seed, so the next Open seeds it again.
	Stop <-chan struct{}

	batchSize int // records per transaction of a bulk write or a migration; 0 means bulkBatch
	// onMigrate, when set (by tests), hears the assets a migration has
	// done after each of its transactions.
	onMigrate func(done int64)
	dueBatch  int // due events one transaction applies; 0 means dueBatch
	copyBatch int // library assets per write of a sandbox's copy, and the size from which it copies in batches; 0 means copyBatch
	copyLimit int // the largest library a sandbox copies; 0 means MaxSandboxLibrary
}

// Engine is the simulated service: state, clock, credits, limits and
// lifecycles. It is safe for concurrent use.
type Engine struct {
	db      *store.DB
	w       *store.Writer[*tx]
	cfg     Config
	clock   *Clock
	seed    uint64
	speed   float64
	world   *fixtures.World
	models  map[string]*fixtures.Model
	effects map[string]*fixtures.Effect
	images  ImageResolver
	fates   Fates
	// ownFiles recognizes the server's own file addresses (set by the
	// fronts, which know the hosts they answer to); nil recognizes none.
	ownFiles atomic.Pointer[func(string) (FileRef, bool)]

	// onCopyBatch, when set (by tests), is told after each batch of a sandbox's library copy commits, on the creator's goroutine
	onCopyBatch func(done, total int)
	closed      chan struct{}
	closeOnce   sync.Once
	mu          sync.RWMutex // guards tokens and workspaces
	state       sync.RWMutex // readers share it; a bulk write (reset, restore) holds it alone

	tokens     map[string]Token
	tokensByWS map[uint64][]string   // each workspace's tokens
	workspaces map[uint64]*Workspace // immutable snapshots of name, plan, limits
	sandboxes  sandboxIndex

	nextDue    atomic.Int64 // unix nanos of the earliest pending event; MaxInt64 when none
	dueChanged chan struct{}
	dueMu      sync.Mutex

	rate  *rateLimiter
	hub   *hub
	feed  feed // committed changes, for subscribers
	cov   coverage
	meter meter         // counters for metrics (metrics.go)
	polls atomic.Int64  // long polls waiting
	epoch atomic.Uint64 // resets and restores so far; part of file addresses
	// wsRestores counts the workspaces restored from a snapshot
	// (RestoreWorkspace): renderings kept before one are stale (Renders).
	wsRestores atomic.Uint64
	pages      pageCache              // the ids of recent list pages, until the next write
	fileKey    []byte                 // of file address tokens, from Config.FileSecret; nil: seeded
	signKey    atomic.Pointer[[]byte] // signs expiring file addresses (secrets.go)
	log        *slog.Logger

	// incomplete is set when a bulk write failed half-way: the state is not
	// served until a reset (or a restart) seeds it again.
	incomplete atomic.Pointer[Error]
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
	if cfg.Fates == nil {
		cfg.Fates = noFates{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.WallClock == nil {
		cfg.WallClock = time.Now
	}
	if cfg.dueBatch <= 0 {
		cfg.dueBatch = dueBatch
	}
	if cfg.copyBatch <= 0 {
		cfg.copyBatch = copyBatch
	}
	if cfg.copyLimit <= 0 {
		cfg.copyLimit = MaxSandboxLibrary
	}
	db, err := store.Open(cfg.Path, schema, store.Options{Durable: cfg.Durable})
	if err != nil {
		return nil, err
	}
	e := &Engine{
		db: db, cfg: cfg, clock: cfg.Clock, seed: cfg.Seed, speed: cfg.Speed, world: cfg.World,
		images: cfg.Images, fates: cfg.Fates, log: cfg.Log, closed: make(chan struct{}),
		dueChanged: make(chan struct{}), rate: newRateLimiter(), hub: newHub(),
	}

	e.initSecrets()
	e.indexCatalog()
	if err := e.load(cfg.Reset); err != nil {
		db.Close()
		return nil, err
	}
	if err := e.dropUnfinishedCopies(); err != nil {
		db.Close()
		return nil, err
	}
	e.w = store.NewWriter[*tx](db, writerOwner{e}, e.log)
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
	c, err := e.db.Condition(e.fingerprint())
	if err != nil {
		return err
	}
	fresh, unfinished := c.New, c.Unfinished
	var epoch uint64
	switch {
	case fresh:
	case unfinished != "":
		if err := e.db.View(func(btx *bolt.Tx) error {
			if v := btx.Bucket(bMeta).Get([]byte("epoch")); len(v) == 8 {
				epoch = getU64(v) + 1 // addresses handed out before stay dead
			}
			return nil
		}); err != nil {
			return err
		}
	case reset:
	case c.Mismatch != nil:
		return c.Mismatch
	case c.Older != "":
		if err := e.migrate(c.Older); err != nil {
			return fmt.Errorf("migrate %s from state schema %s to %s: %w", e.cfg.Path, c.Older, schemaVersion, err)
		}
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
	if err := e.db.AddMissingBuckets(); err != nil {
		return err
	}
	return e.db.View(func(btx *bolt.Tx) error {
		if !fresh {
			if v := btx.Bucket(bMeta).Get([]byte("clock")); len(v) == 8 {
				last := Stamp(getU64(v)).Time()
				if e.clock.Mode() == ClockReal && e.clock.wall != nil {
					var off time.Duration
					if o := btx.Bucket(bMeta).Get([]byte("clock_offset")); len(o) == 8 {
						off = time.Duration(int64(getU64(o)))
					}
					e.clock.resume(off, last)
				} else {
					e.clock.restore(last)
				}
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
	e.loadSignKey(btx.Bucket(bMeta).Get(keySignKey))
	if err := e.rate.load(btx); err != nil {
		return err
	}
	return e.loadPrincipals(btx)
}

// Close stops the engine: it waits for queued writes, saves the clock and
// the rate windows, and closes the file.
func (e *Engine) Close() error {
	first := false
	e.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	e.w.Close() // every write already accepted is committed
	close(e.closed)
	e.clock.wakeParked() // every parked wait (ParkNotify) is on the clock
	err := e.db.Update(func(btx *bolt.Tx) error {
		t := e.newTx(btx)
		return t.finish()
	})
	if cerr := e.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReleaseMapped hands the state file's pages this process has read back to
// the kernel's page cache, when something was written since the last call
// (see store.DB.ReleaseMapped); it waits for a bulk write to end, and
// fails while the state is incomplete.
func (e *Engine) ReleaseMapped() error { return e.db.ReleaseMapped(e.read) }

// Clock returns the engine's clock.
func (e *Engine) Clock() *Clock { return e.clock }

// Seed is the seed every random choice derives from.
func (e *Engine) Seed() uint64 { return e.seed }

// World returns the fixture the engine was seeded from.
func (e *Engine) World() *fixtures.World { return e.world }

var errClosed = &Error{Kind: EUNAVAILABLE, Code: "service_unavailable", Message: "The server is shutting down."}

func readEpoch(btx *bolt.Tx) uint64 {
	if v := btx.Bucket(bMeta).Get([]byte("epoch")); len(v) == 8 {
		return getU64(v)
	}
	return 0
}
