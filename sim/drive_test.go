package sim

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeWall is a wall clock the test moves.
type fakeWall struct {
	mu sync.Mutex
	t  time.Time
}

func (w *fakeWall) now() time.Time { w.mu.Lock(); defer w.mu.Unlock(); return w.t }

func (w *fakeWall) add(d time.Duration) { w.mu.Lock(); defer w.mu.Unlock(); w.t = w.t.Add(d) }

// driveRig runs drive with wall time in the test's hands: every wait the
// driver starts is reported on waits and ends when the test sends on fire;
// flush is the rate-flush tick.
type driveRig struct {
	e     *Engine
	wall  *fakeWall
	waits chan time.Duration
	fire  chan time.Time
	flush chan time.Time
}

func newDriveRig(t *testing.T, mode ClockMode) *driveRig {
	t.Helper()
	wall := &fakeWall{t: DefaultEpoch}
	e, err := Open(Config{Path: filepath.Join(t.TempDir(), "state.db"), World: testWorld(t), Clock: NewClock(mode, DefaultEpoch, wall.now)})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return &driveRig{e: e, wall: wall, waits: make(chan time.Duration, 16), fire: make(chan time.Time), flush: make(chan time.Time)}
}

// start runs the driver until the returned function stops it and waits
// for it to return.
func (r *driveRig) start(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	wait := func(d time.Duration) (<-chan time.Time, func() bool) {
		r.waits <- d
		return r.fire, func() bool { return true }
	}
	go func() {
		defer close(done)
		r.e.drive(ctx, r.flush, wait)
	}()
	return func() {
		cancel()
		within(t, done, "the driver's return")
	}
}

// generation starts a 30-second image job and returns its asset's id.
func (r *driveRig) generation(t *testing.T) uint64 {
	t.Helper()
	g, err := r.e.CreateGeneration(context.Background(), principal(t, r.e, "mk_test_all_scopes"),
		GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a fox [mock:delay=30]"})
	require.NoError(t, err)
	return g.Assets[0].ID
}

func (r *driveRig) status(t *testing.T, id uint64) string {
	t.Helper()
	a, err := r.e.AssetByID(id)
	require.NoError(t, err)
	return a.Status
}

// On a real clock the driver waits exactly until the next due event and
// applies it then, step by step, until the job is done; nothing is applied
// before its time.
func TestDriveAppliesEachDueEventOnItsTime(t *testing.T) {
	r := newDriveRig(t, ClockReal)
	id := r.generation(t)
	steps := 0
	for r.status(t, id) != StatusCompleted {
		steps++
		require.Less(t, steps, 10, "the job never completes")
		stop := r.start(t)
		d := within(t, r.waits, "the wait for the next due event")
		next, ok, _ := r.e.NextDue()
		require.True(t, ok)
		assert.Equal(t, next.Sub(r.e.Clock().Now()), d, "it waits until the event is due")
		before := r.status(t, id)
		require.NoError(t, r.e.FlushRates())
		assert.Equal(t, before, r.status(t, id), "nothing moves before its time")
		r.wall.add(d)
		r.fire <- time.Time{}
		stop() // the due event is applied before the driver looks at stop again
		assert.False(t, r.e.Clock().Now().Before(next))
		after, ok, _ := r.e.NextDue()
		assert.True(t, !ok || after.After(next), "the event due at %s was applied", next)
	}
	assert.Greater(t, steps, 0)
}

// Events already due when the driver starts are applied at once, with no
// wait.
func TestDriveAppliesOverdueEventsAtOnce(t *testing.T) {
	r := newDriveRig(t, ClockReal)
	id := r.generation(t)
	r.wall.add(time.Hour)
	stop := r.start(t)
	r.flush <- time.Time{} // the driver reached its wait: it settled first
	stop()
	assert.Equal(t, StatusCompleted, r.status(t, id))
	assert.Empty(t, r.waits, "nothing was waited for")
}

// On a manual clock the driver waits for nothing (every move of the clock
// applies due events itself) until the clock becomes real; flush ticks do
// not end it.
func TestDriveWaitsOnlyOnARealClock(t *testing.T) {
	r := newDriveRig(t, ClockManual)
	id := r.generation(t)
	before := r.status(t, id)
	stop := r.start(t)
	defer stop()
	r.flush <- time.Time{}
	r.flush <- time.Time{} // it came back to its wait after the first tick
	assert.Empty(t, r.waits, "no wall-time wait on a manual clock")
	assert.Equal(t, before, r.status(t, id), "nothing moved")

	require.NoError(t, r.e.SetClockMode(ClockReal))
	d := within(t, r.waits, "the wait once the clock is real")
	assert.Positive(t, d)
}
