package mcp_test

import (
	"context"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The named snapshots are tools of the control MCP server: an agent saves
// the world, tries something, lists its snapshots and puts the world back,
// then deletes the snapshot.
func TestNamedSnapshotsAsControlTools(t *testing.T) {
	srv := mediamock.RunT(t)
	transport := &sdk.StreamableClientTransport{Endpoint: srv.ControlMCPURL(), MaxRetries: -1, HTTPClient: &http.Client{Transport: srv.Client().Transport}}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, transport, nil)
	require.NoError(t, err)
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, name := range []string{"save_named_snapshot", "list_named_snapshots", "restore_named_snapshot", "delete_named_snapshot"} {
		assert.Contains(t, names, name)
	}

	balance := func() float64 {
		_, out, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
		return out["credits_balance"].(float64)
	}
	before := balance()
	var saved mediamock.NamedSnapshot
	testkit.ControlCall(t, cs, "save_named_snapshot", map[string]any{"name": "before", "description": "a rehearsal"}, &saved)
	assert.Equal(t, "before", saved.Name)
	status, out, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`)
	require.Equal(t, http.StatusCreated, status, out)
	assert.Less(t, balance(), before)

	var list struct {
		Data []mediamock.NamedSnapshot `json:"data"`
	}
	testkit.ControlCall(t, cs, "list_named_snapshots", map[string]any{}, &list)
	require.Len(t, list.Data, 1)
	assert.Equal(t, "a rehearsal", list.Data[0].Description)
	testkit.ControlCall(t, cs, "restore_named_snapshot", map[string]any{"name": "before"}, nil)
	assert.Equal(t, before, balance(), "the world is back")
	testkit.ControlCall(t, cs, "delete_named_snapshot", map[string]any{"name": "before"}, nil)
	testkit.ControlCall(t, cs, "list_named_snapshots", map[string]any{}, &list)
	assert.Empty(t, list.Data)
}
