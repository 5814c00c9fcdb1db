package control_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// snapshotNames are the names a list of named snapshots answers.
func snapshotNames(t *testing.T, body string) []string {
	t.Helper()
	var list struct {
		Data []mediamock.NamedSnapshot `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list), body)
	out := []string{}
	for _, s := range list.Data {
		out = append(out, s.Name)
	}
	return out
}

// assetCount is how many assets a key's workspace lists.
func assetCount(t *testing.T, srv *mediamock.Server, key string) int {
	t.Helper()
	status, out := restAs(t, srv, key, "GET", "/assets?limit=50", "")
	require.Equal(t, http.StatusOK, status, out)
	return len(out["data"].([]any))
}

// Named snapshots round-trip through the control API and a restart: the
// whole state saved, changed, put back; kept beside the state file, so
// that a server started again on it lists and restores it.
func TestNamedSnapshotsRoundTrip(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	onDB := func(o *mediamock.Options) { o.DBPath, o.Clock = db, mediamock.ClockManual }
	srv := mediamock.RunT(t, onDB)
	before := assetCount(t, srv, mediamock.KeyAllScopes)

	status, body := ctl(t, srv, "PUT", "/snapshots/before-run", `{"description":"the fixtures"}`)
	require.Equal(t, http.StatusCreated, status, body)
	var saved mediamock.NamedSnapshot
	require.NoError(t, json.Unmarshal([]byte(body), &saved))
	assert.Equal(t, "global", saved.Scope)
	assert.Positive(t, saved.Bytes)
	_, err := os.Stat(db + ".snapshots")
	require.NoError(t, err, "kept beside the state file")

	status, out := restAs(t, srv, mediamock.KeyAllScopes, "POST", "/generations", imageGeneration)
	require.Equal(t, http.StatusCreated, status, out)
	assert.Equal(t, before+1, assetCount(t, srv, mediamock.KeyAllScopes))

	status, body = ctl(t, srv, "POST", "/snapshots/before-run/restore", `{}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, before, assetCount(t, srv, mediamock.KeyAllScopes), "the world is back")

	status, body = ctl(t, srv, "GET", "/snapshots", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"before-run"}, snapshotNames(t, body))

	status, body = ctl(t, srv, "PUT", "/snapshots/Not%20a%20name", `{}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	status, body = ctl(t, srv, "POST", "/snapshots/nothing/restore", `{}`)
	assert.Equal(t, http.StatusNotFound, status, body)

	// A restart keeps it.
	restAs(t, srv, mediamock.KeyAllScopes, "POST", "/generations", imageGeneration)
	require.NoError(t, srv.Close())
	again := mediamock.RunT(t, onDB)
	assert.Equal(t, before+1, assetCount(t, again, mediamock.KeyAllScopes))
	list, err := again.Snapshots()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "the fixtures", list[0].Description)
	require.NoError(t, again.RestoreSnapshot("before-run"))
	assert.Equal(t, before, assetCount(t, again, mediamock.KeyAllScopes))

	status, body = ctl(t, again, "DELETE", "/snapshots/before-run", `{}`)
	require.Equal(t, http.StatusOK, status, body)
	status, body = ctl(t, again, "GET", "/snapshots", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, snapshotNames(t, body))
}

// A sandbox's snapshot restores into it alone: another sandbox and the
// server's workspaces stay as they are; its control token reaches its own
// snapshots only, and cannot restore another's.
func TestSandboxSnapshots(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithControlToken("server-secret"))
	server := []string{"Authorization", "Bearer server-secret"}
	a := createSandbox(t, srv, `{}`, server...)
	b := createSandbox(t, srv, `{}`, server...)
	asA := []string{"Authorization", "Bearer " + a.ControlToken}
	asB := []string{"Authorization", "Bearer " + b.ControlToken}
	start := assetCount(t, srv, a.APIKey)

	status, body := ctl(t, srv, "PUT", "/snapshots/clean", `{}`, asA...)
	require.Equal(t, http.StatusCreated, status, body)
	var saved mediamock.NamedSnapshot
	require.NoError(t, json.Unmarshal([]byte(body), &saved))
	assert.Equal(t, a.ID, saved.SandboxID)

	for _, key := range []string{a.APIKey, b.APIKey, mediamock.KeyAllScopes} {
		status, out := restAs(t, srv, key, "POST", "/generations", imageGeneration)
		require.Equal(t, http.StatusCreated, status, out)
	}
	others := []int{assetCount(t, srv, b.APIKey), assetCount(t, srv, mediamock.KeyAllScopes)}

	// B sees none of A's, and cannot restore it, by name or by naming A.
	status, body = ctl(t, srv, "GET", "/snapshots", "", asB...)
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, snapshotNames(t, body))
	status, body = ctl(t, srv, "POST", "/snapshots/clean/restore", `{}`, asB...)
	assert.Equal(t, http.StatusNotFound, status, body)
	status, body = ctl(t, srv, "POST", "/snapshots/clean/restore?sandbox="+a.ID, `{}`, asB...)
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.Equal(t, "outside_sandbox", errCode(t, body))
	status, _ = ctl(t, srv, "GET", "/snapshots", "", server...)
	assert.Equal(t, http.StatusOK, status)

	status, body = ctl(t, srv, "POST", "/snapshots/clean/restore", `{}`, asA...)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, start, assetCount(t, srv, a.APIKey), "A is back")
	assert.Equal(t, others, []int{assetCount(t, srv, b.APIKey), assetCount(t, srv, mediamock.KeyAllScopes)}, "the others are untouched")
	status, out := restAs(t, srv, a.APIKey, "GET", "/account", "")
	assert.Equal(t, http.StatusOK, status, "its keys still work: %v", out)

	// The server's token reaches A's by naming it; a sandbox keeps at most
	// 8; a deleted sandbox's snapshots go with it.
	status, body = ctl(t, srv, "GET", "/snapshots?sandbox="+a.ID, "", server...)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"clean"}, snapshotNames(t, body))
	for i := range 7 {
		status, body = ctl(t, srv, "PUT", fmt.Sprintf("/snapshots/s%d", i), `{}`, asA...)
		require.Equal(t, http.StatusCreated, status, body)
	}
	status, body = ctl(t, srv, "PUT", "/snapshots/one-more", `{}`, asA...)
	assert.Equal(t, http.StatusConflict, status, body)
	assert.Equal(t, "snapshot_limit_reached", errCode(t, body))
	status, body = ctl(t, srv, "PUT", "/snapshots/clean", `{}`, asA...)
	assert.Equal(t, http.StatusCreated, status, "a name saved again is replaced: %s", body)
	status, _ = ctl(t, srv, "DELETE", "/sandboxes/"+a.ID, "", server...)
	require.Equal(t, http.StatusOK, status)
	status, body = ctl(t, srv, "GET", "/snapshots", "", server...)
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, snapshotNames(t, body), "the server's own are none; A's went with it")
}

// A snapshot pack given at start (--snapshot) is on the shelf, checked:
// a file that is no snapshot stops the start.
func TestSnapshotPacks(t *testing.T) {
	src := mediamock.RunT(t)
	restAs(t, src, mediamock.KeyAllScopes, "POST", "/generations", imageGeneration)
	pack := filepath.Join(t.TempDir(), "one-more-image.db")
	f, err := os.Create(pack)
	require.NoError(t, err)
	_, err = src.Snapshot(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.SnapshotPacks = []string{pack, "named=" + pack} })
	list, err := srv.Snapshots()
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "named", list[0].Name)
	assert.Equal(t, "one-more-image", list[1].Name)
	before := assetCount(t, srv, mediamock.KeyAllScopes)
	require.NoError(t, srv.RestoreSnapshot("one-more-image"))
	assert.Equal(t, before+1, assetCount(t, srv, mediamock.KeyAllScopes))

	bad := filepath.Join(t.TempDir(), "bad.db")
	require.NoError(t, os.WriteFile(bad, []byte("not a snapshot"), 0o600))
	_, err = mediamock.New(mediamock.Options{DBPath: filepath.Join(t.TempDir(), "s.db"), NoListener: true, SnapshotPacks: []string{bad}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "snapshot pack "+bad)

}
