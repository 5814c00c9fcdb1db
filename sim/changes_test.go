package sim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// received takes what the channel holds now. Changes are handed over before
// the call that committed them returns, so nothing is still on its way.
func received(ch <-chan Change) []Change {
	var out []Change
	for {
		select {
		case c := <-ch:
			out = append(out, c)
		default:
			return out
		}
	}
}

// summary renders changes as kind:detail, for comparing sequences.
func summary(cs []Change) []string {
	var out []string
	for _, c := range cs {
		s := string(c.Kind)
		switch c.Kind {
		case ChangeJob:
			s += fmt.Sprintf(":%s/%d/%s", c.Job.Type, c.Job.ID, c.Job.Status)
		case ChangeLedger:
			s += fmt.Sprintf(":%s/%d", c.Ledger.Type, c.Ledger.Amount)
		case ChangePublication:
			s += ":" + c.Publication.Status
		case ChangeClock:
			s += ":" + string(c.Mode)
		case ChangeOverflow:
			s += fmt.Sprintf(":%d", c.Dropped)
		}
		out = append(out, s)
	}
	return out
}

func TestSubscribeJobLedgerAndClockChanges(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	ch, cancel := e.Subscribe()

	created, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a kite"})
	require.NoError(t, err)
	id := created.Assets[0].ID
	got := received(ch)
	assert.Equal(t, []string{"ledger:charge/6", fmt.Sprintf("job:generation/%d/queued", id)}, summary(got))
	assert.Equal(t, p.WorkspaceID, got[1].WorkspaceID)
	assert.Equal(t, "imagen-4", got[1].Job.Model)
	assert.Equal(t, DefaultEpoch, got[1].At)

	_, err = e.Advance(time.Minute)
	require.NoError(t, err)
	got = received(ch)
	assert.Equal(t, []string{"clock:manual", fmt.Sprintf("job:generation/%d/processing", id), fmt.Sprintf("job:generation/%d/completed", id)}, summary(got))
	assert.Equal(t, DefaultEpoch.Add(time.Minute), got[0].At)
	assert.True(t, got[1].At.Before(got[2].At), "each transition at its own due time")

	// A failure and its refund; a stuck job says so.
	g2, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "another"})
	require.NoError(t, err)
	received(ch)
	_, err = e.ControlAsset(g2.Assets[0].ID, JobStick, "")
	require.NoError(t, err)
	got = received(ch)
	require.Len(t, got, 1)
	assert.True(t, got[0].Job.Stuck)
	_, err = e.ControlAsset(g2.Assets[0].ID, JobFail, "content_policy")
	require.NoError(t, err)
	got = received(ch)
	assert.Equal(t, []string{fmt.Sprintf("job:generation/%d/failed", g2.Assets[0].ID), "ledger:refund/6"}, summary(got))
	assert.Equal(t, "content_policy", got[0].Job.Error.Code)

	require.NoError(t, e.SetClockMode(ClockVirtual))
	assert.Equal(t, []string{"clock:virtual"}, summary(received(ch)))

	_, err = e.AddWorkspace(WorkspaceSpec{Name: "New", Credits: 5})
	require.NoError(t, err)
	assert.Equal(t, []string{"ledger:grant/5", "workspaces"}, summary(received(ch)))

	require.NoError(t, e.Reset(DefaultEpoch))
	assert.Equal(t, []string{"clock:virtual", "reset"}, summary(received(ch)), "a reset says only that the state was replaced")

	cancel()
	_, open := <-ch
	assert.False(t, open)
}

func TestSubscribeEncoreAndPublications(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	lib, err := e.ListAssets(p, AssetQuery{Kind: KindImage, Status: StatusCompleted, Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, lib.Data)
	ch, cancel := e.Subscribe()
	defer cancel()

	c, err := e.CreateEncore(context.Background(), p, EncoreRequest{Effect: "golden-hour", ImageURL: "https://example.com/me.jpg"})
	require.NoError(t, err)
	got := received(ch)
	assert.Equal(t, []string{"ledger:charge/" + fmt.Sprint(c.CreditsCharged), fmt.Sprintf("job:encore/%d/queued", c.ID)}, summary(got))
	assert.Equal(t, []uint64{c.AssetID}, got[1].Job.AssetIDs)
	assert.Equal(t, "golden-hour", got[1].Job.Model)

	pub, err := e.CreatePublication(p, PublicationRequest{AssetIDs: []uint64{lib.Data[0].ID}, Caption: "hi", Platforms: []string{"instagram"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"publication:publishing"}, summary(received(ch)))
	_, err = e.Advance(time.Hour)
	require.NoError(t, err)
	got = received(ch)
	assert.Contains(t, summary(got), "publication:published")
	assert.Contains(t, summary(got), fmt.Sprintf("job:encore/%d/completed", c.ID))
	for _, c := range got {
		if c.Kind == ChangePublication {
			assert.Equal(t, pub.ID, c.Publication.ID)
			assert.NotEmpty(t, c.Publication.Deliveries[0].PostURL)
		}
	}
}

// A subscriber that does not keep up loses changes, never holds the
// writer, and is told how many it lost.
func TestSubscriberOverflow(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_business")
	slow, cancelSlow := e.Subscribe()
	defer cancelSlow()
	const n = SubscriptionBuffer/2 + 10 // two changes each: a charge and a queued job
	for i := 0; i < n; i++ {
		_, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x"})
		require.NoError(t, err)
	}
	assert.Len(t, received(slow), SubscriptionBuffer)
	_, err := e.GrantCredits(p.WorkspaceID, 1, "after the loss")
	require.NoError(t, err)
	got := received(slow)
	require.Len(t, got, 2)
	assert.Equal(t, ChangeOverflow, got[0].Kind)
	assert.EqualValues(t, 2*n-SubscriptionBuffer, got[0].Dropped)
	assert.Equal(t, "after the loss", got[1].Ledger.Description)
}

func TestNoChangesCollectedWithoutSubscribers(t *testing.T) {
	e := newEngine(t, engineOpts{})
	_, cancel := e.Subscribe()
	cancel()
	var collected int
	require.NoError(t, e.update(func(t *tx) error {
		t.jobChanged(&Job{ID: 1, Type: "generation", Status: StatusQueued})
		t.ledgerRecorded(1, LedgerEntry{Type: LedgerGrant})
		collected = len(t.changes)
		return nil
	}))
	assert.Zero(t, collected)
}

// BenchmarkChanges is the writer's cost of 100 generations created and run
// to completion, with no subscriber and with subscribers that keep up.
func BenchmarkChanges(b *testing.B) {
	for _, subs := range []int{0, 1, 4} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			e := newEngine(b, engineOpts{})
			p := principal(b, e, "mk_test_business")
			if _, err := e.GrantCredits(p.WorkspaceID, 1<<40, "bench"); err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			delivered := 0
			var cancels []func()
			for range subs {
				ch, cancel := e.Subscribe()
				cancels = append(cancels, cancel)
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := 0
					for c := range ch {
						if c.Kind == ChangeOverflow {
							panic("a subscriber that keeps up lost changes")
						}
						n++
					}
					mu.Lock()
					delivered += n
					mu.Unlock()
				}()
			}
			req := GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a benchmark"}
			b.ReportAllocs()
			for b.Loop() {
				for range 100 {
					if _, err := e.CreateGeneration(context.Background(), p, req); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := e.Advance(time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			for _, cancel := range cancels {
				cancel()
			}
			wg.Wait()
			if subs > 0 {
				b.ReportMetric(float64(delivered)/float64(subs)/float64(b.N), "changes/op")
			}
		})
	}
}
