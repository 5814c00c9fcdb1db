package proxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/proxy"
)

// TestUpstreamUnreachable: a clear 502 with the error object, and the
// address (which could carry a token in its query) not echoed.
func TestUpstreamUnreachable(t *testing.T) {
	f := startProxy(t, "http://127.0.0.1:1/api/v1")
	r := getJSON(t, f.srv.Client(), f.base()+"/account?access_token=mk_secret_in_query_0000", "mk_secret_token_for_test_9f3a")
	require.Equal(t, http.StatusBadGateway, r.Status)
	e := r.JSON(t)["error"].(map[string]any)
	assert.Equal(t, "upstream_unreachable", e["code"])
	assert.Contains(t, e["message"], "127.0.0.1:1")
	assert.Empty(t, r.Header.Get(proxy.ViolationsHeader))
	assert.Equal(t, 1, f.p.Summary().UpstreamErrors)
	assert.Zero(t, f.p.Summary().Exchanges)
	for _, out := range []string{f.log.String(), f.report.String(), string(r.Body)} {
		assert.NotContains(t, out, "mk_secret")
	}
}

func TestNewRefusesBadUpstreams(t *testing.T) {
	for _, u := range []string{"", "ftp://example.com", "https://", "https://user:pw@example.com/api/v1", "https://example.com/api/v1?x=1"} {
		_, err := proxy.New(proxy.Options{Upstream: u, Document: mediamock.OpenAPIDocument})
		assert.Error(t, err, u)
		if err != nil {
			assert.NotContains(t, err.Error(), "pw", u)
		}
	}
	p, err := proxy.New(proxy.Options{Upstream: "https://api.example.com/prefix/api/v1/", Document: mediamock.OpenAPIDocument})
	require.NoError(t, err)
	assert.Equal(t, "https://api.example.com/prefix", p.Upstream())
}

// TestStreaming: the proxy hands on each part of a streamed body as it
// comes, without waiting for the end.
func TestStreaming(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(up.Close)
	defer close(release)
	f := startProxy(t, up.URL)
	// A bound, never a delay: a proxy that buffers fails here, not by hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/files/events", nil)
	require.NoError(t, err)
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, len("data: first\n\n"))
	_, err = io.ReadFull(resp.Body, buf) // blocks forever if the proxy buffers
	require.NoError(t, err)
	assert.Equal(t, "data: first\n\n", string(buf))
}
