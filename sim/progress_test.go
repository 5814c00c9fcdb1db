package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateWindowReadsWithoutCounting(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_free_plan")
	w := e.RateWindow(p.WorkspaceID)
	assert.True(t, w.Allowed)
	assert.Equal(t, 20, w.Limit)
	assert.Equal(t, 20, w.Remaining)
	for range 3 {
		e.Allow(p.WorkspaceID)
	}
	for range 5 {
		w = e.RateWindow(p.WorkspaceID)
	}
	assert.Equal(t, 17, w.Remaining, "peeking does not count")
	assert.Equal(t, 16, e.Allow(p.WorkspaceID).Remaining)
	for range 16 {
		e.Allow(p.WorkspaceID)
	}
	w = e.RateWindow(p.WorkspaceID)
	assert.False(t, w.Allowed)
	assert.Equal(t, 0, w.Remaining)
	assert.Positive(t, w.RetryAfter)
	_, err := e.Advance(time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 20, e.RateWindow(p.WorkspaceID).Remaining, "a new window")
}

func TestLongPollReportsEveryStatusItReads(t *testing.T) {
	e := newEngine(t, engineOpts{mode: ClockVirtual})
	p := principal(t, e, "mk_test_all_scopes")
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "a slow one [mock:delay=20]"})
	require.NoError(t, err)
	var seen []string
	ctx := WithProgress(context.Background(), func(status string) {
		if len(seen) == 0 || seen[len(seen)-1] != status {
			seen = append(seen, status)
		}
	})
	got, err := e.Generation(ctx, p, g.Assets[0].ID, 55*time.Second)
	require.NoError(t, err)
	require.True(t, Final(got.Status), got.Status)
	require.NotEmpty(t, seen)
	assert.Equal(t, got.Status, seen[len(seen)-1])
	assert.Contains(t, []string{StatusQueued, StatusProcessing}, seen[0])
}
