package controlplane

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/sim"
)

// Deleting a sandbox tells SandboxDeleted its workspace, once the sandbox
// is gone, so that the fronts free what they keep for it; a reset keeps
// the sandbox, and a failed delete tells nothing.
func TestDeletingASandboxTellsTheFronts(t *testing.T) {
	p := newPlane(t, "")
	sb, err := p.CreateSandbox(sim.SandboxSpec{})
	require.NoError(t, err)
	var told []uint64
	p.SandboxDeleted = func(ws uint64) {
		_, live := p.Eng.SandboxOf(ws)
		assert.False(t, live, "told once the sandbox is gone")
		told = append(told, ws)
	}
	_, err = p.ResetSandbox(sb.ID)
	require.NoError(t, err)
	assert.Empty(t, told, "a reset keeps the sandbox")
	require.NoError(t, p.DeleteSandbox(sb.ID))
	assert.Equal(t, []uint64{sb.WorkspaceID}, told)
	assert.Error(t, p.DeleteSandbox(sb.ID))
	assert.Len(t, told, 1, "a failed delete tells nothing")

	p.SandboxDeleted = nil
	other, err := p.CreateSandbox(sim.SandboxSpec{})
	require.NoError(t, err)
	assert.NoError(t, p.DeleteSandbox(other.ID), "nothing to tell")
}
