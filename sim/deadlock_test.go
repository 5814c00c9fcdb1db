package sim

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Writes that change the cached principals, under a full queue of other
// writes, must not wedge the writer (regression test).
func TestPrincipalReloadUnderLoadDoesNotDeadlock(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	var wg sync.WaitGroup
	for i := 0; i < 4000; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				_, err := e.GrantCredits(p.WorkspaceID, 1, "load")
				require.NoError(t, err)
			}
		}()
	}
	for i := 0; i < 200; i++ {
		_, err := e.AddToken(p.WorkspaceID, TokenSpec{Scopes: []string{ScopeRead}})
		require.NoError(t, err)
		_, ok := e.Authenticate("mk_test_all_scopes")
		require.True(t, ok)
	}
	wg.Wait()
}
