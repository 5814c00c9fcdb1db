package sim

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/fault"

	"github.com/mediamock/mediamock/fixtures"
)

// testWorld is the embedded default world with seed 0.
func testWorld(t testing.TB) *fixtures.World {
	t.Helper()
	w, err := fixtures.Load("", 0)
	require.NoError(t, err)
	return w
}

type engineOpts struct {
	path    string
	world   *fixtures.World
	mode    ClockMode
	durable bool
	seed    uint64
	batch   int          // records per bulk transaction (0: the default)
	due     int          // due events per transaction (0: the default)
	log     *slog.Logger // nil: discarded
	copy    int          // library assets per write of a sandbox's copy (0: the default)
	limit   int          // the largest library a sandbox copies (0: the default)
}

func newEngine(t testing.TB, o engineOpts) *Engine {
	t.Helper()
	if o.path == "" {
		o.path = filepath.Join(t.TempDir(), "state.db")
	}
	if o.world == nil {
		o.world = testWorld(t)
	}
	if o.mode == "" {
		o.mode = ClockManual
	}
	e, err := Open(Config{Path: o.path, World: o.world, Clock: NewClock(o.mode, DefaultEpoch, nil), Durable: o.durable, Seed: o.seed,
		batchSize: o.batch, dueBatch: o.due, copyBatch: o.copy, copyLimit: o.limit, Log: o.log, Fates: fault.NewSet(o.seed)})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

func principal(t testing.TB, e *Engine, token string) Principal {
	t.Helper()
	p, ok := e.Authenticate(token)
	require.True(t, ok, "token %s", token)
	return p
}

func intp(v int) *int { return &v }

func TestGenerationLifecycleOnManualClock(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	before, err := e.Balance(p.WorkspaceID)
	require.NoError(t, err)

	created, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "video", ModelID: "kling-2.5-turbo", Prompt: "a fox in the snow"})
	require.NoError(t, err)
	require.Len(t, created.Assets, 1)
	a := created.Assets[0]
	assert.Equal(t, StatusQueued, a.Status)
	assert.Equal(t, int64(30), created.CreditsCharged)
	assert.Equal(t, before-30, created.CreditsBalance)
	assert.Equal(t, KindVideo, a.Kind)
	assert.Equal(t, 1280, a.Width)
	assert.Equal(t, 720, a.Height)
	assert.Equal(t, 5, a.DurationSeconds)

	job := e.jobOf(t, p, a.ID)
	// Just before the provider picks it up it is still queued.
	_, err = e.Advance(time.Duration(job.QueuedFor) - time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, StatusQueued, e.statusOf(t, p, a.ID))
	_, err = e.Advance(time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, StatusProcessing, e.statusOf(t, p, a.ID))
	_, err = e.Advance(time.Duration(job.ProcessFor))
	require.NoError(t, err)
	g, err := e.Generation(context.Background(), p, a.ID, 0)
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, g.Status)
	assert.Equal(t, int64(30), g.Assets[0].Credits)

	ledger, err := e.Ledger(p.WorkspaceID)
	require.NoError(t, err)
	bal, _ := e.Balance(p.WorkspaceID)
	require.NoError(t, CheckLedger(ledger, bal))
}

func (e *Engine) jobOf(t testing.TB, p Principal, assetID uint64) *Job {
	t.Helper()
	var job *Job
	require.NoError(t, e.view(func(tx *tx) error {
		a, err := tx.asset(p.WorkspaceID, assetID)
		if err != nil {
			return err
		}
		job, err = tx.job(a.JobID)
		return err
	}))
	return job
}

func (e *Engine) statusOf(t testing.TB, p Principal, assetID uint64) string {
	t.Helper()
	g, err := e.Generation(context.Background(), p, assetID, 0)
	require.NoError(t, err)
	return g.Status
}

func TestFailureRefundsOnceAndLedgerExplainsBalance(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	start, _ := e.Balance(p.WorkspaceID)
	require.NoError(t, addRule(e, GlobalFaults, fault.Spec{Kind: fault.JobFailure, First: 1, Modality: "image"}))

	created, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a red kite", Count: intp(3)})
	require.NoError(t, err)
	assert.Equal(t, int64(18), created.CreditsCharged)
	assert.Len(t, created.Assets, 3)
	_, err = e.Advance(10 * time.Minute)
	require.NoError(t, err)

	g, err := e.Generation(context.Background(), p, created.Assets[1].ID, 0)
	require.NoError(t, err)
	assert.Equal(t, StatusFailed, g.Status)
	for _, a := range g.Assets {
		assert.Equal(t, StatusFailed, a.Status)
		assert.Equal(t, int64(0), a.Credits)
		require.NotNil(t, a.Error)
		assert.Equal(t, "provider_error", a.Error.Code)
	}
	bal, _ := e.Balance(p.WorkspaceID)
	assert.Equal(t, start, bal, "the failure refunded the charge")

	// Advancing further never refunds twice.
	_, err = e.Advance(24 * time.Hour)
	require.NoError(t, err)
	bal, _ = e.Balance(p.WorkspaceID)
	assert.Equal(t, start, bal)

	ledger, err := e.Ledger(p.WorkspaceID)
	require.NoError(t, err)
	require.NoError(t, CheckLedger(ledger, bal))
	var charges, refunds int
	for _, le := range ledger {
		switch le.Type {
		case LedgerCharge:
			charges++
		case LedgerRefund:
			refunds++
			assert.Equal(t, int64(18), le.Amount)
		}
	}
	assert.Equal(t, 1, charges)
	assert.Equal(t, 1, refunds)
}

func TestInsufficientCreditsCreatesNothing(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_no_credits")
	_, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x", Count: intp(2)})
	be := AsError(err)
	require.Equal(t, EPAYMENT, be.Kind, "%v", err)
	assert.Equal(t, "insufficient_credits", be.Code)
	assert.EqualValues(t, 12, be.Details["required"])
	assert.EqualValues(t, 0, be.Details["balance"])
	pg, err := e.ListAssets(p, AssetQuery{Limit: 50})
	require.NoError(t, err)
	assert.Empty(t, pg.Data)
	ledger, _ := e.Ledger(p.WorkspaceID)
	assert.Empty(t, ledger)
}

func TestMonthlyGiftCoversAndRenewsAtMonthBoundary(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes") // 5 flux-2-pro gifts a month
	start, _ := e.Balance(p.WorkspaceID)
	req := GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "gift"}
	for i := 0; i < 5; i++ {
		g, err := e.CreateGeneration(context.Background(), p, req)
		require.NoError(t, err)
		assert.True(t, g.CoveredByGift, "gift %d", i)
		assert.Zero(t, g.CreditsCharged)
		assert.Zero(t, g.Assets[0].Credits)
	}
	g, err := e.CreateGeneration(context.Background(), p, req)
	require.NoError(t, err)
	assert.False(t, g.CoveredByGift, "the sixth this month is paid")
	assert.Equal(t, int64(8), g.CreditsCharged)

	acct, err := e.Account(p)
	require.NoError(t, err)
	assert.Equal(t, 0, acct.Gifts[0].Remaining)
	assert.Equal(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), acct.Gifts[0].RenewsAt)

	// The clock crosses into February: gifts renew.
	require.NoError(t, e.SetTime(time.Date(2026, 2, 1, 0, 0, 1, 0, time.UTC)))
	acct, _ = e.Account(p)
	assert.Equal(t, 5, acct.Gifts[0].Remaining)
	g, err = e.CreateGeneration(context.Background(), p, req)
	require.NoError(t, err)
	assert.True(t, g.CoveredByGift)
	bal, _ := e.Balance(p.WorkspaceID)
	assert.Equal(t, start-8, bal)
	ledger, _ := e.Ledger(p.WorkspaceID)
	require.NoError(t, CheckLedger(ledger, bal))
}

func TestConcurrencyLimitQueuesInOrder(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_business")
	var ids []uint64
	for i := 0; i < 10; i++ {
		g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "3d", ModelID: "meshy-5", Prompt: "a chair [mock:delay=60]"})
		require.NoError(t, err)
		ids = append(ids, g.Assets[0].ID)
	}
	// Eight run at once (delay has no provider queue); the 9th and 10th wait.
	for i, id := range ids {
		want := StatusProcessing
		if i >= 8 {
			want = StatusQueued
		}
		assert.Equal(t, want, e.statusOf(t, p, id), "job %d", i)
	}
	// Another modality has its own slots.
	other, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x [mock:delay=5]"})
	require.NoError(t, err)
	assert.Equal(t, StatusProcessing, other.Status)

	_, err = e.Advance(60 * time.Second)
	require.NoError(t, err)
	for i, id := range ids {
		want := StatusCompleted
		if i >= 8 {
			want = StatusProcessing // started the moment the first eight freed their slots
		}
		assert.Equal(t, want, e.statusOf(t, p, id), "job %d", i)
	}
	_, err = e.Advance(60 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, e.statusOf(t, p, ids[9]))
}

func TestConcurrentCreatesNeverOverdraw(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(map[bool]string{false: "ephemeral", true: "durable"}[durable], func(t *testing.T) {
			e := newEngine(t, engineOpts{durable: durable})
			p := principal(t, e, "mk_test_free_plan") // 150 credits; imagen-4 costs 6 and has 2 gifts a month
			var ok, broke atomic.Int64
			var wg sync.WaitGroup
			for i := 0; i < 64; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "race"})
					switch {
					case err == nil:
						ok.Add(1)
					case IsKind(err, EPAYMENT):
						broke.Add(1)
					default:
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			assert.EqualValues(t, 150/6+2, ok.Load(), "25 paid and 2 gifts")
			assert.EqualValues(t, 64-27, broke.Load())
			bal, _ := e.Balance(p.WorkspaceID)
			assert.Equal(t, int64(0), bal)
			ledger, _ := e.Ledger(p.WorkspaceID)
			require.NoError(t, CheckLedger(ledger, bal))
		})
	}
}

func TestRestartKeepsStateIDsAndClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	w := testWorld(t)
	open := func() *Engine {
		t.Helper()
		e, err := Open(Config{Path: path, World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil)})
		require.NoError(t, err)
		return e
	}
	e := open()
	p := principal(t, e, "mk_test_all_scopes")
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "video", ModelID: "veo-3-fast", Prompt: "waves [mock:delay=100]"})
	require.NoError(t, err)
	_, err = e.Advance(40 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, StatusProcessing, e.statusOf(t, p, g.Assets[0].ID))
	balance, _ := e.Balance(p.WorkspaceID)
	require.NoError(t, e.Close())

	e = open()
	defer e.Close()
	assert.Equal(t, DefaultEpoch.Add(40*time.Second), e.Clock().Now(), "the clock continues where it was")
	bal, _ := e.Balance(p.WorkspaceID)
	assert.Equal(t, balance, bal)
	assert.Equal(t, StatusProcessing, e.statusOf(t, p, g.Assets[0].ID), "the job is still in flight")
	_, err = e.Advance(60 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, e.statusOf(t, p, g.Assets[0].ID), "and finishes on time")
	g2, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "after restart"})
	require.NoError(t, err)
	assert.Equal(t, g.Assets[0].ID+1, g2.Assets[0].ID, "ids continue")
}

func TestReopenWithOtherFixturesRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	e, err := Open(Config{Path: path, World: testWorld(t), Clock: NewClock(ClockManual, DefaultEpoch, nil)})
	require.NoError(t, err)
	require.NoError(t, e.Close())
	_, err = Open(Config{Path: path, World: testWorld(t), Seed: 9, Clock: NewClock(ClockManual, DefaultEpoch, nil)})
	require.ErrorContains(t, err, "seeded from other fixtures or another seed")
	e, err = Open(Config{Path: path, World: testWorld(t), Seed: 9, Reset: true, Clock: NewClock(ClockManual, DefaultEpoch, nil)})
	require.NoError(t, err)
	require.NoError(t, e.Close())
}

func TestVirtualWaitMovesTimeToCompletion(t *testing.T) {
	e := newEngine(t, engineOpts{mode: ClockVirtual})
	p := principal(t, e, "mk_test_all_scopes")
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "x [mock:delay=12]", Count: intp(2)})
	require.NoError(t, err)
	start := e.Clock().Now()
	got, err := e.Generation(context.Background(), p, g.Assets[0].ID, 55*time.Second)
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, got.Status)
	assert.Equal(t, 12*time.Second, e.Clock().Now().Sub(start), "time moved exactly to the completion")

	// A wait shorter than the job moves time by the wait only.
	g, err = e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "y [mock:delay=30]"})
	require.NoError(t, err)
	start = e.Clock().Now()
	got, err = e.Generation(context.Background(), p, g.Assets[0].ID, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, StatusProcessing, got.Status)
	assert.Equal(t, 10*time.Second, e.Clock().Now().Sub(start))
}

func TestManualWaitWakesOnAdvanceAndOnCancel(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x [mock:delay=5]"})
	require.NoError(t, err)
	job := e.jobOf(t, p, g.Assets[0].ID)
	watched := watchedJobs(e)
	done := make(chan Generation)
	go func() {
		got, err := e.Generation(context.Background(), p, g.Assets[0].ID, 55*time.Second)
		assert.NoError(t, err)
		done <- got
	}()
	awaitWatch(t, watched, job.ID) // the waiter sleeps on the job
	_, err = e.Advance(5 * time.Second)
	require.NoError(t, err)
	got := <-done
	assert.Equal(t, StatusCompleted, got.Status)

	// A waiter whose client goes away returns the current state at once.
	g, err = e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x [mock:stuck]"})
	require.NoError(t, err)
	job = e.jobOf(t, p, g.Assets[0].ID)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		got, err := e.Generation(ctx, p, g.Assets[0].ID, 55*time.Second)
		assert.NoError(t, err)
		done <- got
	}()
	awaitWatch(t, watched, job.ID)
	cancel()
	assert.Equal(t, StatusQueued, (<-done).Status, "the clock did not move")
}

// watchedJobs makes e tell, on the channel returned, each job a long poll
// starts watching. Call it before anyone waits.
func watchedJobs(e *Engine) <-chan uint64 {
	ch := make(chan uint64, 64)
	e.hub.onWatch = func(id uint64) {
		select {
		case ch <- id:
		default: // the hook must not block; a test reads what it waits for
		}
	}
	return ch
}

// awaitWatch waits until a long poll watches job id.
func awaitWatch(t testing.TB, watched <-chan uint64, id uint64) {
	t.Helper()
	for within(t, watched, fmt.Sprintf("a long poll watching job %d", id)) != id {
	}
}

func TestLongPollsLeaveNoWatchers(t *testing.T) {
	e := newEngine(t, engineOpts{mode: ClockVirtual})
	p := principal(t, e, "mk_test_all_scopes")
	for i := 0; i < 20; i++ {
		g, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "x"})
		require.NoError(t, err)
		got, err := e.Generation(context.Background(), p, g.Assets[0].ID, 55*time.Second)
		require.NoError(t, err)
		require.Equal(t, StatusCompleted, got.Status)
		_, err = e.Generation(context.Background(), p, g.Assets[0].ID, 55*time.Second) // already final
		require.NoError(t, err)
	}
	assert.Zero(t, e.hub.watching())
}

func TestWorkspaceIsolation(t *testing.T) {
	e := newEngine(t, engineOpts{})
	acme := principal(t, e, "mk_test_all_scopes")
	pixel := principal(t, e, "mk_test_free_plan")
	g, err := e.CreateGeneration(context.Background(), acme, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "private"})
	require.NoError(t, err)
	_, err = e.Generation(context.Background(), pixel, g.Assets[0].ID, 0)
	assert.True(t, IsKind(err, ENOTFOUND), "%v", err)
	pg, err := e.ListAssets(pixel, AssetQuery{Query: "private", Limit: 50})
	require.NoError(t, err)
	assert.Empty(t, pg.Data)
	_, err = e.CreateGeneration(context.Background(), pixel, GenerationRequest{Modality: "image", ModelID: "flux-2-pro", Prompt: "ref", ReferenceAssetIDs: []uint64{g.Assets[0].ID}})
	assert.True(t, IsKind(err, EINVALID), "another workspace's asset is no reference: %v", err)
}

func TestTimesStayInRange(t *testing.T) {
	e := newEngine(t, engineOpts{})
	_, err := e.Advance(200 * 365 * 24 * time.Hour)
	assert.True(t, IsKind(err, EINVALID), "past 2200: %v", err)
	assert.Error(t, e.SetTime(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)))
	assert.Equal(t, DefaultEpoch, e.Clock().Now(), "nothing moved")

	assert.Equal(t, MaxMagicDelay, ParseMagic("[mock:delay=3e9]").Delay)
	assert.Equal(t, MaxSpeechSeconds, SpeechSeconds(strings.Repeat("a ", 2500)))
	assert.Equal(t, 2, SpeechSeconds("これは日本語の長い文章です。声で読み上げられます。"), "scripts without spaces count too (one field, 25 characters)")

	p := principal(t, e, "mk_test_all_scopes")
	far := DefaultEpoch.AddDate(2, 0, 0)
	_, err = e.CreatePublication(p, PublicationRequest{AssetIDs: []uint64{1}, Caption: "x", Platforms: []string{"instagram"}, ScheduledAt: &far})
	require.True(t, IsKind(err, EINVALID), "%v", err)
	assert.Contains(t, err.Error(), "at most 365 days ahead")
}
