package testkit

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// GeneratedImage generates an image with key, waiting for it, and returns
// its asset's url.
func GeneratedImage(t testing.TB, srv Server, key string) string {
	t.Helper()
	status, gen, _ := REST(t, srv, key, "POST", "/generations",
		`{"modality":"image","model_id":"flux-2-pro","prompt":"a red fox","aspect_ratio":"9:16","resolution":"2k","wait_seconds":55}`)
	require.Equal(t, 201, status, "%v", gen)
	require.Equal(t, "completed", gen["status"], "%v", gen)
	return gen["assets"].([]any)[0].(map[string]any)["url"].(string)
}

// Fetch downloads a file URL the server handed out, failing the test
// unless it answers 200.
func Fetch(t testing.TB, srv Server, url string) ([]byte, http.Header) {
	t.Helper()
	resp, err := srv.Client().Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return data, resp.Header
}
