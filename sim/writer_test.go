package sim

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A write that panics fails alone, rolled back; the writes committed in the
// same group succeed, and the writer goes on serving.
func TestWriterRecoversFromAPanic(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	before, err := e.Balance(p.WorkspaceID)
	require.NoError(t, err)
	boom := func(t *tx) error {
		if err := t.b(bFaults).Put([]byte("half-done"), []byte("x")); err != nil {
			return err
		}
		panic("boom")
	}

	// Hold the writer so that the next writes queue up and form one group.
	queued := make(chan struct{}, 64)
	e.w.OnQueued = func() {
		select {
		case queued <- struct{}{}:
		default: // the hook must not block; the later writes are not waited for
		}
	}
	started, release := make(chan struct{}), make(chan struct{})
	go e.update(func(*tx) error { close(started); <-release; return nil })
	<-started
	within(t, queued, "the held write joining the queue")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 2 {
				errs[i] = e.update(boom)
				return
			}
			_, errs[i] = e.GrantCredits(p.WorkspaceID, 1, "")
		}()
	}
	for i := range errs { // the writes are queued by other goroutines: wait until they are there
		within(t, queued, fmt.Sprintf("write %d of %d joining the queue", i+1, len(errs)))
	}
	close(release)
	wg.Wait()

	for i, err := range errs {
		if i == 2 {
			assert.True(t, IsKind(err, EINTERNAL), "the write that panicked fails: %v", err)
			continue
		}
		assert.NoError(t, err, "write %d of the group", i)
	}
	bal, err := e.Balance(p.WorkspaceID)
	require.NoError(t, err)
	assert.Equal(t, before+3, bal)

	// Alone, again: it fails; its half-done write is rolled back; the writer lives.
	assert.True(t, IsKind(e.update(boom), EINTERNAL))
	require.NoError(t, e.view(func(tx *tx) error {
		assert.Nil(t, tx.b(bFaults).Get([]byte("half-done")))
		return nil
	}))
	bal, err = e.GrantCredits(p.WorkspaceID, 1, "")
	require.NoError(t, err)
	assert.Equal(t, before+4, bal)

	// A bulk write that panics fails the same way.
	assert.True(t, IsKind(e.bulkUpdate(func() error { panic("bulk boom") }), EINTERNAL))
	_, err = e.GrantCredits(p.WorkspaceID, 1, "")
	require.NoError(t, err)
}

// A clock jump over more due events than one transaction applies gives the
// same state as one that applies them all at once.
func TestManyDueEventsInBoundedTransactions(t *testing.T) {
	run := func(due int) map[string]string {
		t.Helper()
		e := newEngine(t, engineOpts{due: due})
		p := principal(t, e, "mk_test_business")
		for i := range 30 {
			_, err := e.CreateGeneration(t.Context(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "queued " + strconv.Itoa(i)})
			require.NoError(t, err)
		}
		_, err := e.Advance(time.Hour)
		require.NoError(t, err)
		pg, err := e.ListAssets(p, AssetQuery{Query: "queued", Status: StatusCompleted, Limit: 50})
		require.NoError(t, err)
		assert.Len(t, pg.Data, 30, "every job ran, 8 at a time")
		return stateDigest(t, e)
	}
	assert.Equal(t, run(0), run(3))
}
