package proxy

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func body(t *testing.T, s string) any {
	t.Helper()
	v, ok := decodeJSON([]byte(s))
	require.True(t, ok, s)
	return v
}

func TestTimingFromPolls(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	asset := func(id int, status string) string {
		return `{"object": "generation", "status": "` + status + `", "assets": [{"id": ` + itoa(id) + `, "object": "asset", "kind": "image", "model": "flux-2-pro", "status": "` + status + `", "created_at": "2026-01-05T09:00:00+00:00"}]}`
	}
	var tt timingTracker
	req := map[string]any{"modality": "image", "model_id": "flux-2-pro"}
	tt.observe(observation{opID: "createGeneration", request: req, body: body(t, asset(7, "queued")), sent: at(0), at: at(0)})
	for _, p := range []struct {
		s      float64
		status string
	}{{1, "queued"}, {2, "processing"}, {3, "processing"}, {9, "processing"}, {10, "completed"}, {11, "completed"}} {
		tt.observe(observation{opID: "getGeneration", body: body(t, asset(7, p.status)), sent: at(p.s), at: at(p.s)})
	}
	// A voice job created with a wait that answered once it was done.
	tt.observe(observation{opID: "createGeneration", request: map[string]any{"modality": "audio", "model_id": "openai-tts-1"},
		body: body(t, `{"assets": [{"id": 8, "object": "asset", "kind": "voice", "model": "openai-tts-1", "status": "completed"}]}`),
		sent: at(20), at: at(23), waited: true})
	// A job still running at the end, seen in a list.
	tt.observe(observation{opID: "createGeneration", request: req, body: body(t, asset(9, "queued")), sent: at(30), at: at(30)})
	tt.observe(observation{opID: "listAssets", body: body(t, `{"object": "list", "data": [{"id": 9, "object": "asset", "status": "processing"}, {"id": 99, "object": "asset", "status": "queued"}]}`), sent: at(31), at: at(31)})

	got := tt.timings()
	require.Len(t, got.Jobs, 3)
	j := got.Jobs[0]
	assert.Equal(t, "flux-2-pro", j.Model)
	assert.Equal(t, "image", j.Modality)
	assert.Equal(t, "completed", j.Outcome)
	assert.Equal(t, "polls", j.MeasuredBy)
	assert.Equal(t, 1.5, *j.QueuedSeconds, "between the last queued (1 s) and the first processing (2 s)")
	assert.Equal(t, 0.5, j.QueuedWithin)
	assert.Equal(t, 8.0, *j.ProcessingSeconds, "from 1.5 s to between 9 s and 10 s")
	assert.Equal(t, 1.0, j.ProcessingWithin)
	assert.Equal(t, 9.5, *j.TotalSeconds)

	v := got.Jobs[1]
	assert.Equal(t, "audio/voice", v.Modality)
	assert.Nil(t, v.QueuedSeconds, "never seen processing: no split")
	assert.Nil(t, v.ProcessingSeconds)
	assert.Equal(t, 3.0, *v.TotalSeconds, "from the request to the answer that waited")

	r := got.Jobs[2]
	assert.Empty(t, r.Outcome)
	assert.Equal(t, 0.5, *r.QueuedSeconds)
	assert.Nil(t, r.ProcessingSeconds)

	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"format":"mediamock-timing/1"`)
	assert.Contains(t, string(b), `"processing_seconds":null`)
}

// A service whose objects carry when a job started and ended is measured
// by its own clock, not by the polls.
func TestTimingPrefersTimestamps(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	obj := func(status, extra string) any {
		return body(t, `{"id": 3, "object": "encore_creation", "effect": "golden-hour", "asset_id": 4, "status": "`+status+`", "created_at": "2026-01-05T09:00:00Z"`+extra+`}`)
	}
	var tt timingTracker
	tt.observe(observation{opID: "createEncoreCreation", body: obj("queued", ""), sent: t0, at: t0})
	tt.observe(observation{opID: "getEncoreCreation", body: obj("processing", `, "started_at": "2026-01-05T09:00:04.25Z"`), sent: t0.Add(30 * time.Second), at: t0.Add(30 * time.Second)})
	tt.observe(observation{opID: "getEncoreCreation", body: obj("completed", `, "started_at": "2026-01-05T09:00:04.25Z", "completed_at": "2026-01-05T09:00:50Z"`), sent: t0.Add(time.Minute), at: t0.Add(time.Minute)})
	j := tt.timings().Jobs[0]
	assert.Equal(t, "encore", j.Modality)
	assert.Equal(t, "timestamps", j.MeasuredBy)
	assert.Equal(t, 4.25, *j.QueuedSeconds)
	assert.Equal(t, 45.75, *j.ProcessingSeconds)
}

func TestLearn(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	tm := Timings{Format: TimingFormat, Jobs: []JobTiming{
		{Model: "a", Modality: "image", Outcome: "completed", QueuedSeconds: f(1), ProcessingSeconds: f(10)},
		{Model: "b", Modality: "video", Outcome: "failed", QueuedSeconds: f(5), ProcessingSeconds: f(50)},
		{Model: "a", Modality: "image", Outcome: "completed", QueuedSeconds: f(3), ProcessingSeconds: f(20)},
		{Model: "a", Modality: "image", QueuedSeconds: f(2)}, // still running
		{Model: "c", Modality: "3d", Outcome: "completed", TotalSeconds: f(9)},
	}}
	l := tm.Learn()
	require.Len(t, l, 3)
	assert.Equal(t, "a", l[0].Model)
	assert.Equal(t, 3, l[0].Jobs)
	assert.Equal(t, Stats{Count: 3, Median: 2, P90: 2.8}, roundStats(l[0].Queued))
	assert.Equal(t, Stats{Count: 2, Median: 15, P90: 19}, roundStats(l[0].Processing))
	timing, ok := l[0].Timing(AsSamples)
	require.True(t, ok)
	assert.Equal(t, []float64{1, 3, 2}, timing.Queued.Samples)
	assert.Equal(t, []float64{10, 20}, timing.Processing.Samples)
	timing, ok = l[0].Timing(AsLogNormal)
	require.True(t, ok)
	assert.Equal(t, 15.0, timing.Processing.LogNormal.Median)
	assert.InDelta(t, 0.184, timing.Processing.LogNormal.Sigma, 0.001, "ln(19/15)/1.2816")
	_, ok = l[2].Timing(AsSamples)
	assert.False(t, ok, "no split of c's total")
}

func roundStats(s Stats) Stats {
	r := func(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }
	return Stats{Count: s.Count, Median: r(s.Median), P90: r(s.P90)}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
