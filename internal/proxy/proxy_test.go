package proxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
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

// TestReportEndpoint: the summary at GET /_mock/proxy/report, on the
// proxy's own listener; nothing else under /_mock/proxy/.
func TestReportEndpoint(t *testing.T) {
	srv := mediamock.RunT(t)
	f := startProxy(t, srv.BaseURL())
	client := f.srv.Client()
	getJSON(t, client, f.base()+"/account", mediamock.KeyAllScopes)
	r := getJSON(t, client, f.srv.URL+proxy.ReportPath, "")
	require.Equal(t, http.StatusOK, r.Status)
	m := r.JSON(t)
	assert.EqualValues(t, 1, m["exchanges"])
	assert.Equal(t, srv.URL(), m["upstream"])
	assert.Len(t, m["rules"], len(check.Rules))
	assert.Equal(t, http.StatusNotFound, getJSON(t, client, f.srv.URL+"/_mock/proxy/other", "").Status)
	assert.Equal(t, http.StatusMethodNotAllowed, postJSON(t, client, f.srv.URL+proxy.ReportPath, "", map[string]any{}).Status)
	// The mock's own control API is the upstream's, reached through the proxy.
	assert.Equal(t, http.StatusOK, getJSON(t, client, f.srv.URL+"/_mock/health", "").Status)

	var table strings.Builder
	f.p.WriteSummary(&table)
	assert.Contains(t, table.String(), "proxy summary: 1 exchanges")
	assert.Regexp(t, `ratelimit\.headers\s+1\s+0`, table.String())
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
