package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/proxy"
)

var api = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.Parse("openapi.json", mediamock.OpenAPIDocument)
})

// lockedBuffer is a report written from the proxy's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t *testing.T, upstream string) (*httptest.Server, *proxy.Proxy, *lockedBuffer) {
	t.Helper()
	c, err := api()
	require.NoError(t, err)
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	var report lockedBuffer
	p := proxy.New(proxy.Options{Upstream: u, Contract: c, Report: &report})
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	return ts, p, &report
}

func do(t *testing.T, method, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// In front of this mock, a broad scenario breaks no rule.
func TestInFrontOfTheMockNothingIsReported(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockVirtual))
	ts, p, report := start(t, srv.URL())
	base := ts.URL + "/api/v1"
	key := mediamock.KeyAllScopes
	assert.Equal(t, 200, do(t, "GET", base+"/account", key, "").StatusCode)
	assert.Equal(t, 200, do(t, "GET", base+"/models?modality=video", key, "").StatusCode)
	assert.Equal(t, 201, do(t, "POST", base+"/generations", key, `{"modality":"image","model_id":"imagen-4","prompt":"a fox","count":2}`).StatusCode)
	assert.Equal(t, 201, do(t, "POST", base+"/generations", key, `{"modality":"image","model_id":"seedream-4","prompt":"a fox","wait_seconds":30}`).StatusCode)
	assert.Equal(t, 200, do(t, "GET", base+"/assets?limit=20", key, "").StatusCode)
	assert.Equal(t, 200, do(t, "GET", base+"/generations/61?wait_seconds=30", key, "").StatusCode)
	assert.Equal(t, 200, do(t, "GET", base+"/social/publications", key, "").StatusCode)
	assert.Equal(t, 200, do(t, "GET", base+"/projects?limit=2", key, "").StatusCode)
	assert.Equal(t, 400, do(t, "POST", base+"/generations", key, `{"modality":"image"}`).StatusCode)
	assert.Equal(t, 401, do(t, "GET", base+"/account", "", "").StatusCode)
	assert.Equal(t, 404, do(t, "GET", base+"/generations/999999", key, "").StatusCode)
	for i := 0; i < 21; i++ {
		do(t, "GET", base+"/account", mediamock.KeyFreePlan, "")
	}
	// The one bad request sent on purpose is the client's violation, named
	// with its fields; the server broke nothing.
	s := p.Summary()
	assert.Greater(t, s.Exchanges, 30)
	assert.Equal(t, map[string]int{"request": 2}, s.Rules)
	assert.Contains(t, report.String(), `"path":"model_id"`)
}

// In front of a server that breaks rules on purpose, each is reported with
// its rule and path, and no token reaches the report.
func TestBrokenUpstreamIsReported(t *testing.T) {
	status := "completed"
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		rate := func() {
			h.Set("X-RateLimit-Limit", "120")
			h.Set("X-RateLimit-Remaining", "100")
			h.Set("X-RateLimit-Reset", "1767603660")
		}
		switch r.URL.Path {
		case "/api/v1/brand_kits": // no rate-limit headers
			w.Write([]byte(`{"object":"list","data":[],"has_more":false}`))
		case "/api/v1/account": // a string where a number is due
			rate()
			w.Write([]byte(`{"object":"account","workspace_id":1,"workspace_name":"x","plan":"pro","credits_balance":"lots","rate_limit_per_minute":120,"scopes":["read"],"token_type":"api_key","publishing_allowed":true,"monthly_gifts":[]}`))
		case "/api/v1/generations/5": // the status goes back
			rate()
			fmt.Fprintf(w, `{"object":"generation","status":%q,"assets":[{"id":5,"object":"asset","kind":"image","status":%q,"credits":1,"created_at":"2026-01-05T09:00:00+00:00"}]}`, status, status)
			status = "processing"
		case "/api/v1/assets": // oldest first
			rate()
			w.Write([]byte(`{"object":"list","data":[{"id":1,"object":"asset","kind":"upload","status":"completed","credits":0,"created_at":"2026-01-05T09:00:00+00:00"},{"id":2,"object":"asset","kind":"upload","status":"completed","credits":0,"created_at":"2026-01-05T09:00:00+00:00"}],"has_more":false}`))
		case "/api/v1/characters": // an error without the error object
			rate()
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"oops"}`))
		case "/api/v1/projects": // 429 without Retry-After
			rate()
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
		}
	}))
	defer bad.Close()
	ts, p, report := start(t, bad.URL)
	base := ts.URL + "/api/v1"
	secret := "mk_live_do_not_leak_0123456789"
	resp := do(t, "GET", base+"/brand_kits", secret, "")
	assert.Contains(t, resp.Header.Get("X-Mediamock-Violations"), "rate-limit-headers")
	do(t, "GET", base+"/account", secret, "")
	do(t, "GET", base+"/generations/5", secret, "")
	do(t, "GET", base+"/generations/5", secret, "")
	do(t, "GET", base+"/assets", secret, "")
	do(t, "GET", base+"/characters", secret, "")
	do(t, "GET", base+"/projects", secret, "")

	var lines []proxy.Exchange
	for _, l := range strings.Split(strings.TrimSpace(report.String()), "\n") {
		var e proxy.Exchange
		require.NoError(t, json.Unmarshal([]byte(l), &e), l)
		lines = append(lines, e)
	}
	found := map[string]string{} // the first path of each rule of each exchange
	for _, e := range lines {
		for _, v := range e.Violations {
			if _, ok := found[e.Path+" "+v.Rule]; !ok {
				found[e.Path+" "+v.Rule] = v.Path
			}
		}
	}
	assert.Equal(t, "X-RateLimit-Limit", found["/api/v1/brand_kits rate-limit-headers"])
	assert.Equal(t, "credits_balance", found["/api/v1/account openapi"])
	assert.Equal(t, "assets[0].status", found["/api/v1/generations/5 status-forward"])
	assert.Equal(t, "data[1].id", found["/api/v1/assets newest-first"])
	assert.Equal(t, "error", found["/api/v1/characters error-object"])
	assert.Equal(t, "Retry-After", found["/api/v1/projects retry-after"])
	assert.NotContains(t, report.String(), secret)
	var summary bytes.Buffer
	p.WriteSummary(&summary)
	assert.NotContains(t, summary.String(), secret)
	assert.Contains(t, summary.String(), "newest-first")
}

// An unreachable upstream is a 502 with the error object.
func TestUnreachableUpstream(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.URL
	dead.Close()
	ts, _, _ := start(t, addr)
	resp, err := http.Get(ts.URL + "/api/v1/account")
	require.NoError(t, err)
	defer resp.Body.Close()
	var e struct{ Error struct{ Code string } }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "upstream_unreachable", e.Error.Code)
}

func benchGet(b *testing.B, url string) {
	client := &http.Client{}
	for b.Loop() {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer mk_test_proxy_bench")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkProxy is a request straight to the mock and the same through the
// proxy, over loopback: the difference is what the proxy adds.
func BenchmarkProxy(b *testing.B) {
	srv := mediamock.RunT(b, func(o *mediamock.Options) { o.Strict = false; o.JournalSize = -1 })
	if _, err := srv.AddWorkspace(mediamock.WorkspaceSpec{Plan: "business", RateLimitPerMinute: 1 << 30, Token: "mk_test_proxy_bench"}); err != nil {
		b.Fatal(err)
	}
	c, err := api()
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse(srv.URL())
	ts := httptest.NewServer(proxy.New(proxy.Options{Upstream: u, Contract: c}))
	defer ts.Close()
	for _, path := range []string{"/api/v1/account", "/api/v1/assets?limit=20"} {
		b.Run("direct "+path, func(b *testing.B) { benchGet(b, srv.URL()+path) })
		b.Run("proxied "+path, func(b *testing.B) { benchGet(b, ts.URL+path) })
	}
}
