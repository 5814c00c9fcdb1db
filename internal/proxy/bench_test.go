package proxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
	"github.com/mediamock/mediamock/internal/testkit"
)

// The proxy's added latency: the same requests to an in-process mock over
// loopback, directly and through the proxy (which validates each exchange).
//
//	go test ./internal/proxy -run '^$' -bench 'Direct|ThroughProxy'

const benchKey = "mk_test_bench_key"

// benchMock is a mock with a workspace whose rate limit never gets in the
// way, holding 20 assets so that a page of 20 is full.
func benchMock(b *testing.B) *mediamock.Server {
	b.Helper()
	srv, err := mediamock.New(mediamock.Options{DBPath: b.TempDir() + "/state.db", Clock: mediamock.ClockManual, JournalSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	if _, err := srv.AddWorkspace(mediamock.WorkspaceSpec{Name: "bench", Plan: "business", Credits: 1 << 40, RateLimitPerMinute: 1 << 30, Token: benchKey}); err != nil {
		b.Fatal(err)
	}
	img := testkit.DataURI("image/png", testkit.PNG(b, 16, 16))
	for i := range 20 {
		body, _ := json.Marshal(map[string]any{"image_url": img, "title": fmt.Sprintf("bench %d.png", i)})
		benchDo(b, srv.Client(), http.MethodPost, srv.BaseURL()+"/uploads", string(body), http.StatusCreated)
	}
	return srv
}

func benchDo(b *testing.B, client *http.Client, method, url, body string, want int) {
	b.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+benchKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
	if v := resp.Header.Get(proxy.ViolationsHeader); v != "" {
		b.Fatalf("%s %s: %s", method, url, v)
	}
}

func benchGets(b *testing.B, base string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(client.CloseIdleConnections)
	for _, path := range []string{"/account", "/assets?limit=20"} {
		b.Run("GET "+path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchDo(b, client, http.MethodGet, base+path, "", http.StatusOK)
			}
		})
	}
}

func BenchmarkDirect(b *testing.B) {
	srv := benchMock(b)
	benchGets(b, srv.BaseURL())
}

func BenchmarkThroughProxy(b *testing.B) {
	srv := benchMock(b)
	p, err := proxy.New(proxy.Options{Upstream: srv.BaseURL(), Document: mediamock.OpenAPIDocument, Report: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	front := httptest.NewServer(p)
	b.Cleanup(front.Close)
	benchGets(b, front.URL+check.BasePath)
}
