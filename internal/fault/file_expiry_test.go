package fault_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/testkit"
)

func init() { hit(fault.FileExpiry, mediamock.FaultSpec{TTLSeconds: new(int64(1))}, download) }

// File addresses expire on the simulated clock; reading the asset again
// gives a fresh one; a moved expiry is refused.
func TestFileURLsExpire(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	created := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"an expiring link"}`)
	id := created["assets"].([]any)[0].(map[string]any)["id"]
	_, err := srv.RunUntilIdle(time.Hour)
	require.NoError(t, err)
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "file_expiry", TTLSeconds: new(int64(3600))})
	require.NoError(t, err)
	url := assetURL(t, srv, id)
	assert.Contains(t, url, "?expires=")
	assert.Contains(t, url, "&signature=")

	c := freshClient()
	resp, err := get(t, c, url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "fresh")

	require.NoError(t, srv.Advance(3601*time.Second))
	resp, err = get(t, c, url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 403, resp.StatusCode)
	assert.Equal(t, "file_url_expired", testkit.ErrorCode(t, string(body)))

	fresh := assetURL(t, srv, id)
	assert.NotEqual(t, url, fresh)
	resp, err = get(t, c, fresh)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "read again, the asset hands out a fresh address")

	moved := strings.Replace(fresh, "?expires=", "?expires=9", 1)
	resp, err = get(t, c, moved)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "invalid_signature", testkit.ErrorCode(t, string(body)))

	var next map[string]int
	for _, f := range srv.Coverage().FailurePaths {
		if f.Kind == "file_expiry" {
			next = f.Next
		}
	}
	assert.Equal(t, 1, next["reread"], "after the expiry the client read the asset again")

	require.NoError(t, srv.ClearFaults())
	plain := assetURL(t, srv, id)
	assert.NotContains(t, plain, "expires", "without the fault, addresses are plain again")
}
