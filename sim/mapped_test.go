package sim

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReleaseMappedKeepsTheState drops the mapped pages between writes and
// reads: every read after a release sees what was committed before it.
func TestReleaseMappedKeepsTheState(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_business")
	before, err := e.ListAssets(p, AssetQuery{Limit: 100})
	require.NoError(t, err)
	require.NoError(t, e.ReleaseMapped())
	after, err := e.ListAssets(p, AssetQuery{Limit: 100})
	require.NoError(t, err)
	require.Equal(t, before, after)

	for range 3 {
		_, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a lighthouse at dusk"})
		require.NoError(t, err)
		require.NoError(t, e.ReleaseMapped())
	}
	released := e.released.Load()
	require.Equal(t, e.commits.Load(), released)
	require.NoError(t, e.ReleaseMapped()) // nothing written since: nothing to do
	require.Equal(t, released, e.released.Load())

	now, err := e.ListAssets(p, AssetQuery{Limit: 100})
	require.NoError(t, err)
	require.Len(t, now.Data, len(before.Data)+3)
	require.Equal(t, before.Data, now.Data[3:])
	require.Equal(t, "a lighthouse at dusk", now.Data[0].Prompt)
}

// TestReleaseMappedUnderLoad releases the pages over and over while writers
// and readers run: no read sees a torn or missing record.
func TestReleaseMappedUnderLoad(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_business")
	// The releaser releases once for each step of the workers, while they
	// go on: it waits on them, never spins.
	stop, stepped := make(chan struct{}), make(chan struct{}, 1)
	step := func() {
		select {
		case stepped <- struct{}{}:
		default: // a release is already due
		}
	}
	var released sync.WaitGroup
	released.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-stepped:
				e.commits.Add(1) // as if something was written: release every time
				if !assert.NoError(t, e.ReleaseMapped()) {
					return
				}
			}
		}
	})
	var work sync.WaitGroup
	for w := range 4 {
		work.Go(func() {
			for i := range 50 {
				step()
				if w%2 == 0 {
					_, err := e.CreateGeneration(context.Background(), p, GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a harbour at noon"})
					if !assert.NoError(t, err) {
						return
					}
					continue
				}
				pg, err := e.ListAssets(p, AssetQuery{Limit: 20 + i%5})
				if !assert.NoError(t, err) {
					return
				}
				for _, a := range pg.Data {
					assert.NotZero(t, a.ID)
					assert.NotEmpty(t, a.Kind)
				}
			}
		})
	}
	work.Wait()
	close(stop)
	released.Wait()
	pg, err := e.ListAssets(p, AssetQuery{Query: "a harbour at noon", Limit: 200})
	require.NoError(t, err)
	require.Len(t, pg.Data, 100)
}
