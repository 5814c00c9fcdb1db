package contract_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// A real clock is wall time plus an offset: an advance adds to it, the
// offset survives a restart (the downtime counts), and a resync drops it,
// with nothing lost.
func TestRealClockOffsetSurvivesRestartAndResyncs(t *testing.T) {
	wall := newFakeWall(time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *env {
		srv, err := mediamock.New(mediamock.Options{Clock: mediamock.ClockReal, WallClock: wall.now, DBPath: path,
			Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		require.NoError(t, err)
		return &env{t: t, root: srv.URL(), client: srv.Client(), srv: srv}
	}
	date := func(e *env) time.Time {
		d, err := http.ParseTime(e.get(keyAll, "/account").expect(200).Header.Get("Date"))
		require.NoError(t, err)
		return d
	}

	e := open()
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox"})
	require.NoError(t, e.srv.Advance(time.Hour))
	assert.WithinDuration(t, wall.now().Add(time.Hour), date(e), time.Second)
	require.NoError(t, e.srv.Close())

	wall.add(10 * time.Minute) // the server is down ten minutes
	e = open()
	defer e.srv.Close()
	assert.WithinDuration(t, wall.now().Add(time.Hour), date(e), time.Second, "the offset survives the restart; the downtime counts")
	assert.EqualValues(t, 3600, e.get("", "/_mock/clock").expect(200).JSON()["offset_seconds"], "the control API says how far ahead")

	res := e.post("", "/_mock/clock/resync", map[string]any{}).expect(200)
	assert.Equal(t, "real", res.JSON()["mode"])
	assert.WithinDuration(t, wall.now(), date(e), time.Second, "back on the wall clock")
	assert.EqualValues(t, 0, res.JSON()["offset_seconds"])
	assert.Equal(t, "completed", e.generation(keyAll, g.Assets[0].ID).Status, "nothing lost")
	wall.add(time.Minute)
	assert.WithinDuration(t, wall.now(), date(e), time.Second, "and it follows the wall")

	require.NoError(t, e.srv.Close())
	wall.add(time.Minute)
	e = open()
	defer e.srv.Close()
	assert.WithinDuration(t, wall.now(), date(e), time.Second, "a resync survives a restart")
	assert.Equal(t, "completed", e.generation(keyAll, g.Assets[0].ID).Status)
}

// A file whose clock ran ahead (an older version kept no offset) still
// never goes backwards at a restart; a resync brings it back. Resync is
// refused outside real mode.
func TestRealClockResyncRules(t *testing.T) {
	wall := newFakeWall(time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "state.db")
	srv, err := mediamock.New(mediamock.Options{Clock: mediamock.ClockManual, StartTime: wall.now().Add(48 * time.Hour), DBPath: path})
	require.NoError(t, err)
	e := &env{t: t, root: srv.URL(), client: srv.Client(), srv: srv}
	res := e.post("", "/_mock/clock/resync", map[string]any{}).expect(400)
	assert.Equal(t, "invalid_clock_move", res.Code())
	e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox [mock:delay=20]"})
	require.NoError(t, srv.Close())

	srv, err = mediamock.New(mediamock.Options{Clock: mediamock.ClockReal, WallClock: wall.now, DBPath: path})
	require.NoError(t, err)
	defer srv.Close()
	assert.WithinDuration(t, wall.now().Add(48*time.Hour), srv.Now(), time.Second, "never before the file's own time")
	require.NoError(t, srv.ResyncClock())
	assert.Equal(t, wall.now(), srv.Now())
	// The job made two days ahead is due when the wall reaches it; reading it meanwhile is fine.
	e = &env{t: t, root: srv.URL(), client: srv.Client(), srv: srv}
	out := e.get(keyAll, "/assets?limit=1").expect(200).JSON()
	assert.NotEmpty(t, out["data"], fmt.Sprint(out))
}

// Control answers give times in whole seconds, like the API; the next
// event's time is rounded up, so moving the clock to it fires the event.
func TestControlClockTimesInWholeSeconds(t *testing.T) {
	e := start(t)
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox"})
	require.NoError(t, e.srv.Advance(1500*time.Millisecond))
	c := e.get("", "/_mock/clock").expect(200).JSON()
	whole := `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`
	assert.Regexp(t, whole, c["now"])
	require.NotEmpty(t, c["next_event_at"])
	assert.Regexp(t, whole, c["next_event_at"])
	for i := 0; i < 10 && e.generation(keyAll, g.Assets[0].ID).Status != "completed"; i++ {
		next := e.get("", "/_mock/clock").expect(200).JSON()["next_event_at"]
		require.NotNil(t, next)
		e.post("", "/_mock/clock/set", map[string]any{"time": next}).expect(200)
	}
	assert.Equal(t, "completed", e.generation(keyAll, g.Assets[0].ID).Status, "next_event_at reaches every event")
}

// A reset of a real clock given no start time puts it on the wall clock,
// not back where the server started.
func TestRealClockResetGoesToTheWall(t *testing.T) {
	wall := newFakeWall(time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC))
	e := start(t, func(o *mediamock.Options) {
		o.Clock = mediamock.ClockReal
		o.WallClock = wall.now
	})
	require.NoError(t, e.srv.Advance(time.Hour))
	wall.add(10 * time.Minute)
	e.post("", "/_mock/reset", map[string]any{}).expect(200)
	assert.Equal(t, wall.now(), e.srv.Now())
	assert.EqualValues(t, 0, e.get("", "/_mock/clock").expect(200).JSON()["offset_seconds"])
}
