package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read that would wait with a Park in its context returns ErrParked at
// once, counted among the open polls; ParkWait wakes at the clock's jump,
// even one that came before it looked; the read again keeps the first
// deadline; End ends the count.
func TestParkedWaitGoesOnWhereItWas(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	id := stuckImage(t, e, p)
	pk := &Park{}
	ctx := WithPark(context.Background(), pk)
	require.Same(t, pk, ParkOf(ctx))

	_, err := e.Generation(ctx, p, id, 30*time.Second)
	require.ErrorIs(t, err, ErrParked)
	assert.Equal(t, 1, int(e.polls.Load()), "a parked poll is open")

	advance(t, e, 10*time.Second) // before the waiter looks: not lost
	e.ParkWait(context.Background(), pk)
	_, err = e.Generation(ctx, p, id, 30*time.Second)
	require.ErrorIs(t, err, ErrParked, "10 s of 30: the wait goes on")
	assert.Equal(t, 1, int(e.polls.Load()), "counted once")

	advance(t, e, 25*time.Second) // past the first deadline, not a new one's
	e.ParkWait(context.Background(), pk)
	g, err := e.Generation(ctx, p, id, 30*time.Second)
	require.NoError(t, err)
	assert.False(t, Final(g.Status))
	pk.End()
	assert.Equal(t, 0, int(e.polls.Load()))
}

// A parked read whose job ends, or whose context ended, answers at once.
func TestParkedWaitEnds(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	id := stuckImage(t, e, p)
	pk := &Park{}
	ctx, cancel := context.WithCancel(WithPark(context.Background(), pk))
	_, err := e.Generation(ctx, p, id, 30*time.Second)
	require.ErrorIs(t, err, ErrParked)
	_, err = e.ControlAsset(id, JobComplete, "")
	require.NoError(t, err)
	e.ParkWait(context.Background(), pk) // the job changed
	g, err := e.Generation(ctx, p, id, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, g.Status)
	pk.End()

	id = stuckImage(t, e, p)
	pk = &Park{}
	ctx = WithPark(ctx, pk)
	_, err = e.Generation(ctx, p, id, 30*time.Second)
	require.ErrorIs(t, err, ErrParked)
	cancel()
	e.ParkWait(ctx, pk)
	_, err = e.Generation(ctx, p, id, 30*time.Second)
	require.NoError(t, err, "an ended context is answered with the state as it is")
	pk.End()
	assert.Equal(t, 0, int(e.polls.Load()))
}
