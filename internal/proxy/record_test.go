package proxy_test

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
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestRecordReplays records a session through the proxy, then starts a
// mock from the recording: it serves the recorded account and the
// recorded completed assets, under a replay key; no recorded token is
// written.
func TestRecordReplays(t *testing.T) {
	srv := mediamock.RunT(t)
	dir := filepath.Join(t.TempDir(), "recording")
	f := startProxy(t, srv.BaseURL(), func(o *proxy.Options) { o.RecordDir = dir })
	client := f.srv.Client()
	key := mediamock.KeyAllScopes

	up := postJSON(t, client, f.base()+"/uploads", key, map[string]any{"image_url": testkit.DataURI("image/png", testkit.PNG(t, 64, 48)), "title": "recorded upload.png"})
	require.Equal(t, http.StatusCreated, up.Status, "%s", up.Body)
	g := postJSON(t, client, f.base()+"/generations", key, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a recorded lighthouse at dusk"})
	require.Equal(t, http.StatusCreated, g.Status, "%s", g.Body)
	id := int64(g.JSON(t)["assets"].([]any)[0].(map[string]any)["id"].(float64))
	for status := ""; status != "completed"; {
		r := getJSON(t, client, fmt.Sprintf("%s/generations/%d?wait_seconds=55", f.base(), id), key)
		require.Equal(t, http.StatusOK, r.Status)
		status = r.JSON(t)["status"].(string)
		require.NotEqual(t, "failed", status)
	}
	account := getJSON(t, client, f.base()+"/account", key).JSON(t)
	require.Equal(t, http.StatusOK, getJSON(t, client, f.base()+"/models", key).Status)
	require.Equal(t, http.StatusOK, getJSON(t, client, f.base()+"/projects?limit=50", key).Status)
	recorded := getJSON(t, client, f.base()+"/assets?limit=50", key)
	require.NoError(t, f.p.Close())

	path := filepath.Join(dir, proxy.FixtureFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), key, "no recorded token is written")
	var w fixtures.World
	require.NoError(t, json.Unmarshal(data, &w))
	assert.Equal(t, "default", w.Extends)
	require.Len(t, w.Workspaces, 1)
	ws := w.Workspaces[0]
	assert.Equal(t, account["workspace_name"], ws.Name)
	assert.Equal(t, account["plan"], ws.Plan)
	assert.EqualValues(t, account["credits_balance"], ws.Credits)
	require.Len(t, ws.APIKeys, 1)
	assert.Equal(t, proxy.ReplayTokenPrefix+"1", ws.APIKeys[0].Token)
	assert.Equal(t, "replay of Bearer "+check.MaskValue(key), ws.APIKeys[0].Name)
	assert.ElementsMatch(t, []string{"read", "generate", "publish"}, ws.APIKeys[0].Scopes)
	var recordedPage struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(recorded.Body, &recordedPage))
	assert.Len(t, ws.Assets.Items, len(recordedPage.Data), "every completed asset of the library (none is an Encore video)")

	// The mock loads the recording and serves what was recorded.
	replay, err := mediamock.New(mediamock.Options{FixturesPath: path, DBPath: filepath.Join(t.TempDir(), "replay.db")})
	require.NoError(t, err)
	t.Cleanup(func() { replay.Close() })
	rc := replay.Client()
	acc := getJSON(t, rc, replay.BaseURL()+"/account", proxy.ReplayTokenPrefix+"1")
	require.Equal(t, http.StatusOK, acc.Status, "%s", acc.Body)
	assert.Equal(t, account["workspace_name"], acc.JSON(t)["workspace_name"])
	assert.Equal(t, account["credits_balance"], acc.JSON(t)["credits_balance"])
	list := getJSON(t, rc, replay.BaseURL()+"/assets?limit=50", proxy.ReplayTokenPrefix+"1")
	require.Equal(t, http.StatusOK, list.Status)
	var page struct {
		Data []struct {
			Kind   string `json:"kind"`
			Model  string `json:"model"`
			Title  string `json:"title"`
			Prompt string `json:"prompt"`
			Status string `json:"status"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(list.Body, &page))
	require.Len(t, page.Data, len(recordedPage.Data))
	// Newest first in both, so item by item.
	for i, a := range page.Data {
		r := recordedPage.Data[i]
		assert.Equal(t, "completed", a.Status)
		assert.Equal(t, r["kind"], a.Kind, "asset %d", i)
		assert.Equal(t, r["title"], nilIfEmpty(a.Title), "asset %d", i)
		assert.Equal(t, r["model"], nilIfEmpty(a.Model), "asset %d", i)
		assert.Equal(t, r["prompt"], nilIfEmpty(a.Prompt), "asset %d", i)
	}
	assert.Equal(t, "a recorded lighthouse at dusk", page.Data[0].Prompt)
	assert.Equal(t, "recorded upload.png", page.Data[1].Title)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
