package fault_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/testkit"
)

func init() { hit(fault.FileTruncate, mediamock.FaultSpec{}, download) }

// A truncated MP4 download resumed with Range is the whole file, and
// FFmpeg's ffprobe reads it; the coverage sees the client resume.
func TestTruncatedVideoResumesWithRange(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	created := testkit.API(t, srv, "POST", "/generations", `{"modality":"video","model_id":"veo-3-fast","prompt":"a resumed download"}`)
	require.Contains(t, created, "assets", created)
	id := created["assets"].([]any)[0].(map[string]any)["id"]
	_, err := srv.RunUntilIdle(time.Hour)
	require.NoError(t, err)
	url := assetURL(t, srv, id)

	c := freshClient()
	whole, err := get(t, c, url)
	require.NoError(t, err)
	want, err := io.ReadAll(whole.Body)
	whole.Body.Close()
	require.NoError(t, err)

	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "file_truncate", AfterFraction: new(0.3)})
	require.NoError(t, err)
	got := downloadResuming(t, c, url)
	assert.Equal(t, sha256.Sum256(want), sha256.Sum256(got), "resumed with Range, the file is whole")

	if probe, err := exec.LookPath("ffprobe"); err == nil {
		path := filepath.Join(t.TempDir(), "resumed.mp4")
		require.NoError(t, os.WriteFile(path, got, 0o600))
		out, err := exec.Command(probe, "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "video")
	}
	next := map[string]int{}
	for _, f := range srv.Coverage().FailurePaths {
		if f.Kind == "file_truncate" {
			assert.Equal(t, 1, f.Met, "the first whole download only")
			next = f.Next
		}
	}
	assert.Equal(t, 1, next["resumed_with_range"])
}

// assetURL reads an asset's file address, as a client does.
func assetURL(t *testing.T, srv *mediamock.Server, id any) string {
	t.Helper()
	out := testkit.API(t, srv, "GET", fmt.Sprintf("/assets/%v", id), "")
	assets, _ := out["assets"].([]any)
	require.Len(t, assets, 1, "%v", out)
	url, _ := assets[0].(map[string]any)["url"].(string)
	require.NotEmpty(t, url, "%v", out)
	return url
}

// downloadResuming is a client's download loop: on a broken body it asks
// for the rest with Range.
func downloadResuming(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	var got []byte
	for attempt := 0; attempt < 5; attempt++ {
		var hdr []string
		if len(got) > 0 {
			hdr = []string{"Range", fmt.Sprintf("bytes=%d-", len(got))}
		}
		resp, err := get(t, c, url, hdr...)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, b...)
		if err == nil {
			require.Greater(t, attempt, 0, "the first download broke")
			return got
		}
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}
	t.Fatal("the download never finished")
	return nil
}
