package sim

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTransactionWorkspaces: a transaction decodes a workspace once, but
// every caller gets a copy of its own: a change that is not put back is
// not seen by the next write of the group, a put one is, and a deleted
// workspace is not found.
func TestTransactionWorkspaces(t *testing.T) {
	e := newEngine(t, engineOpts{})
	p := principal(t, e, "mk_test_all_scopes")
	ws := p.WorkspaceID
	require.NoError(t, e.update(func(t2 *tx) error {
		w, err := t2.workspace(ws)
		require.NoError(t, err)
		balance := w.Balance
		w.Balance = -1 // a write that fails after changing its copy
		if len(w.Gifts) > 0 {
			w.Gifts[0].Used = 999
		}
		again, err := t2.workspace(ws)
		require.NoError(t, err)
		require.Equal(t, balance, again.Balance)
		if len(again.Gifts) > 0 {
			require.NotEqual(t, 999, again.Gifts[0].Used)
		}
		again.Balance = balance - 5
		require.NoError(t, t2.putWorkspace(again))
		again.Balance = 0 // after the put: the kept copy does not change
		third, err := t2.workspace(ws)
		require.NoError(t, err)
		require.Equal(t, balance-5, third.Balance)
		return nil
	}))
	b, err := e.Balance(ws)
	require.NoError(t, err)
	require.NotZero(t, b)
	rollback := errors.New("roll back")
	err = e.update(func(t2 *tx) error {
		_, err := t2.workspace(ws)
		require.NoError(t, err)
		require.NoError(t, t2.deleteWorkspace(ws))
		_, err = t2.workspace(ws)
		require.Error(t, err, "a deleted workspace is not found")
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	_, err = e.Balance(ws)
	require.NoError(t, err, "the deletion was rolled back")
}
