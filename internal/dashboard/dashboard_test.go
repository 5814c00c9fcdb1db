package dashboard_test

import (
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/dashboard"
	"github.com/mediamock/mediamock/internal/testkit"
)

// get requests a path of the server; hdr are header names and values in
// pairs, "Host" replacing the Host header. Redirects are not followed.
func get(t *testing.T, srv *mediamock.Server, method, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	host, header := "", map[string]string{}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			host = hdr[i+1]
			continue
		}
		header[hdr[i]] = hdr[i+1]
	}
	return testkit.Send(t, srv, method, path, host, header, "")
}

func TestDashboardServesThePage(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, _ := get(t, srv, "GET", "/")
	assert.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, "/_mock/ui/", resp.Header.Get("Location"))
	resp, _ = get(t, srv, "GET", "/_mock/ui")
	assert.Equal(t, "/_mock/ui/", resp.Header.Get("Location"))
	resp, body := get(t, srv, "GET", "/?x=1")
	assert.Equal(t, http.StatusFound, resp.StatusCode, "a query does not matter, only the path: %s", body)
	resp, _ = get(t, srv, "GET", "/index.html")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "only / itself leads to the dashboard")
	resp, _ = get(t, srv, "POST", "/")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "other methods on / stay with the service's API")

	resp, body = get(t, srv, "GET", "/_mock/ui/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'self'")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Contains(t, body, `<script src="app.js" defer></script>`)
	assert.NotContains(t, body, "http", "nothing is loaded from elsewhere")
	etag := resp.Header.Get("ETag")
	resp, _ = get(t, srv, "GET", "/_mock/ui/", "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)

	for name, ctype := range map[string]string{"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"} {
		resp, body = get(t, srv, "GET", "/_mock/ui/"+name)
		assert.Equal(t, http.StatusOK, resp.StatusCode, name)
		assert.Equal(t, ctype, resp.Header.Get("Content-Type"), name)
		assert.NotRegexp(t, `(?i)(src|href|url)\(?\s*=?\s*["']?https?://`, body, "%s loads nothing from elsewhere", name)
	}
	resp, _ = get(t, srv, "GET", "/_mock/ui/nope.js")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = get(t, srv, "POST", "/_mock/ui/", "Content-Type", "application/json")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	// Protected like the control API: from pages of other sites.
	resp, _ = get(t, srv, "GET", "/_mock/ui/", "Host", "evil.example")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = get(t, srv, "GET", "/_mock/ui/app.js", "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestDashboardCSPAllowsThePublicURL(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.PublicURL = "http://mediamock:8080" })
	resp, _ := get(t, srv, "GET", "/_mock/ui/")
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "img-src 'self' http://mediamock:8080;", "thumbnails come from the public URL")
}

// TestDashboardWeight reports what a browser loads to show the dashboard
// (go test -v -run Weight) and keeps it small.
func TestDashboardWeight(t *testing.T) {
	w := dashboard.Weight()
	total := 0
	var parts []string
	for _, ext := range []string{"html", "css", "js", "svg"} {
		total += w[ext]
		parts = append(parts, ext+" "+strconv.Itoa(w[ext]))
	}
	t.Logf("dashboard page weight: %d bytes (%s), uncompressed", total, strings.Join(parts, ", "))
	assert.Less(t, total, 100_000, "the page stays light")
}

// The library's previews: a poster for a video (JPEG), a waveform for
// audio and a view of a 3D model (PNG), at the path of the asset's file
// below previews/, token included; none for images, wrong tokens or
// assets not done.
func TestDashboardPreviews(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	urls := map[string]string{}
	for kind, body := range map[string]string{
		"video": `{"modality":"video","model_id":"veo-3-fast","prompt":"a drone shot over a lighthouse at dawn","duration":4}`,
		"voice": `{"modality":"audio","model_id":"openai-tts-1","prompt":"Welcome to Acme Studio."}`,
		"3d":    `{"modality":"3d","model_id":"meshy-5","prompt":"a low-poly teapot"}`,
		"image": `{"modality":"image","model_id":"imagen-4","prompt":"a red fox in the snow"}`,
	} {
		gen := testkit.API(t, srv, "POST", "/generations", body)
		id := gen["assets"].([]any)[0].(map[string]any)["id"]
		require.NoError(t, srv.Advance(time.Hour))
		gen = testkit.API(t, srv, "GET", fmt.Sprintf("/generations/%v", id), "")
		asset := gen["assets"].([]any)[0].(map[string]any)
		require.Equal(t, "completed", asset["status"], kind)
		u, err := url.Parse(asset["url"].(string))
		require.NoError(t, err)
		urls[kind] = strings.TrimPrefix(u.Path, "/files/")
	}
	for kind, ctype := range map[string]string{"video": "image/jpeg", "voice": "image/png", "3d": "image/png"} {
		resp, body := get(t, srv, "GET", "/_mock/ui/"+dashboard.PreviewPath+urls[kind])
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", kind, body)
		assert.Equal(t, ctype, resp.Header.Get("Content-Type"), kind)
		img, _, err := image.Decode(strings.NewReader(body))
		require.NoError(t, err, kind)
		assert.Positive(t, img.Bounds().Dx(), kind)
		resp, _ = get(t, srv, "GET", "/_mock/ui/"+dashboard.PreviewPath+urls[kind], "If-None-Match", resp.Header.Get("ETag"))
		assert.Equal(t, http.StatusNotModified, resp.StatusCode, kind)
		assert.Empty(t, srv.Journal(mediamock.JournalFilter{PathPrefix: "/_mock/ui/"}), "previews stay out of the journal")
	}
	for _, path := range []string{
		urls["image"], // an image is its own picture
		strings.Replace(urls["video"], "/", "/9", 2), // another asset, the token does not match
		"a/1/1/0000000000000000.mp4",
		"nonsense",
	} {
		resp, _ := get(t, srv, "GET", "/_mock/ui/"+dashboard.PreviewPath+path)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
}
