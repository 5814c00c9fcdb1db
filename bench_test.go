package mediamock_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// benchServer starts a server with a workspace whose rate limit and
// credits do not get in the way of a benchmark.
func benchServer(b *testing.B, durable bool) (*mediamock.Server, string) {
	b.Helper()
	srv, err := mediamock.New(mediamock.Options{DBPath: b.TempDir() + "/state.db", Durable: durable, Clock: mediamock.ClockManual, JournalSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	ws, err := srv.AddWorkspace(mediamock.WorkspaceSpec{Name: "bench", Plan: "business", Credits: 1 << 40, RateLimitPerMinute: 1 << 30, Token: "mk_test_bench_key"})
	if err != nil {
		b.Fatal(err)
	}
	return srv, ws.Token
}

func doBench(b *testing.B, client *http.Client, method, url, token, body string) {
	b.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
}

const benchGeneration = `{"modality":"image","model_id":"imagen-4","prompt":"a benchmark of lighthouses at dusk","aspect_ratio":"16:9"}`

// BenchmarkPipeline is the cost of the request pipeline itself (body cap,
// route, auth, rate limit, validation, handler, JSON), without a network.
func BenchmarkPipeline(b *testing.B) {
	srv, token := benchServer(b, false)
	h := srv.Handler()
	run := func(b *testing.B, method, path, body string) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := httptest.NewRequest(method, path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code >= 300 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
	b.Run("GET account", func(b *testing.B) { run(b, "GET", "/api/v1/account", "") })
	b.Run("GET assets page", func(b *testing.B) { run(b, "GET", "/api/v1/assets?limit=20&kind=image", "") })
	b.Run("POST generation", func(b *testing.B) { run(b, "POST", "/api/v1/generations", benchGeneration) })
}

// BenchmarkHTTP is the same over loopback TCP with keep-alive, as a client
// in another process sees it.
func BenchmarkHTTP(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := map[bool]string{false: "ephemeral", true: "durable"}[durable]
		b.Run(name, func(b *testing.B) {
			srv, token := benchServer(b, durable)
			client := srv.Client()
			b.Run("GET account", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						doBench(b, client, "GET", srv.BaseURL()+"/account", token, "")
					}
				})
			})
			b.Run("POST generation", func(b *testing.B) {
				b.SetParallelism(16) // many clients: commits are grouped
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						doBench(b, client, "POST", srv.BaseURL()+"/generations", token, benchGeneration)
					}
				})
			})
			b.Run("GET assets page", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						doBench(b, client, "GET", srv.BaseURL()+"/assets?limit=20", token, "")
					}
				})
			})
		})
	}
}

// BenchmarkNew is the cost of starting a server after the first in a
// process (the contract is parsed once per process).
func BenchmarkNew(b *testing.B) {
	dir := b.TempDir()
	srv, err := mediamock.New(mediamock.Options{NoListener: true, DBPath: dir + "/warm.db"})
	if err != nil {
		b.Fatal(err)
	}
	srv.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		srv, err := mediamock.New(mediamock.Options{NoListener: true, DBPath: b.TempDir() + "/state.db"})
		if err != nil {
			b.Fatal(err)
		}
		srv.Close()
	}
}

// BenchmarkListPage is a page of 20 assets of a 10,000-asset library, the
// list path of the comparison in bench/compare: "bare" without the journal
// and the log, "as served" as the command serves it (the journal on, a
// JSON request line per request).
func BenchmarkListPage(b *testing.B) {
	dir := b.TempDir()
	fix := testkit.BenchLibrary(b, dir, 10000, "read")
	for _, name := range []string{"bare", "bare, metrics off", "as served"} {
		b.Run(name, func(b *testing.B) {
			o := mediamock.Options{DBPath: b.TempDir() + "/state.db", FixturesPath: fix, Clock: mediamock.ClockManual, JournalSize: -1, NoListener: true}
			if name == "as served" {
				o.JournalSize, o.Logger = 0, slog.New(slog.NewJSONHandler(io.Discard, nil))
			}
			srv, err := mediamock.New(o)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			if name == "bare, metrics off" {
				mediamock.WithoutMetrics(srv) // what counting a request costs shows against "bare"
			}
			h := srv.Handler()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest("GET", "/api/v1/assets?limit=20", nil)
					req.Header.Set("Authorization", "Bearer mk_test_bench")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != 200 {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}

// BenchmarkCreateUnderLoad is the creation of bench/compare in process:
// 32 creators at once (16 per P with -cpu 2) on a 10,000-asset library,
// through the whole pipeline, ephemeral and durable. Besides ns/op it
// reports the p99 latency of one creation (p99-ms) and the creations per
// commit of the engine's writer (creations/commit): the group commit's
// batch, which amortises the commit (and the fsync, when durable).
//
//	go test -run '^$' -bench CreateUnderLoad -cpu 2 -count 5 .
func BenchmarkCreateUnderLoad(b *testing.B) {
	dir := b.TempDir()
	fix := testkit.BenchLibrary(b, dir, 10000, "read", "generate")
	const body = `{"modality":"image","model_id":"imagen-4","prompt":"a load test of lighthouses","aspect_ratio":"16:9"}`
	for _, durable := range []bool{false, true} {
		b.Run(map[bool]string{false: "ephemeral", true: "durable"}[durable], func(b *testing.B) {
			srv, err := mediamock.New(mediamock.Options{DBPath: b.TempDir() + "/state.db", FixturesPath: fix, Durable: durable,
				Clock: mediamock.ClockManual, JournalSize: -1, NoListener: true})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			h := srv.Handler()
			var mu sync.Mutex
			var lat []time.Duration
			commits0 := mediamock.Commits(srv)
			b.SetParallelism(16)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				own := make([]time.Duration, 0, 1024)
				for pb.Next() {
					start := time.Now()
					req := httptest.NewRequest("POST", "/api/v1/generations", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer mk_test_bench")
					req.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusCreated {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
					own = append(own, time.Since(start))
				}
				mu.Lock()
				lat = append(lat, own...)
				mu.Unlock()
			})
			b.StopTimer()
			if len(lat) > 0 {
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
			}
			if n := mediamock.Commits(srv) - commits0; n > 0 {
				b.ReportMetric(float64(b.N)/float64(n), "creations/commit")
			}
		})
	}
}

// The list page of BenchmarkListPage as an MCP tools/call of list_assets,
// beside the REST page, through the server's handler as the command serves
// it (the journal on, a JSON request line per request): the requests of
// bench/compare, sessionless (2026-07-28) and inside a session
// (2025-11-25, opened once). It asserts nothing about time; the ratio of
// an MCP call to the REST page is read from its ns/op, or from its
// cpu-ns/op (the process's CPU time per request) on a busy machine.
//
//	go test -run '^$' -bench MCPListPage -benchmem -count 5 .
func BenchmarkMCPListPage(b *testing.B) {
	dir := b.TempDir()
	fix := testkit.BenchLibrary(b, dir, 10000, "read")
	srv, err := mediamock.New(mediamock.Options{DBPath: dir + "/state.db", FixturesPath: fix, Clock: mediamock.ClockManual,
		NoListener: true, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	serve := func(method, path, body string, header http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		req.Header = header.Clone()
		req.Header.Set("Authorization", "Bearer mk_test_bench")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		return w
	}
	accept := "application/json, text/event-stream"
	init := serve("POST", "/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
		http.Header{"Accept": {accept}})
	session := http.Header{"Accept": {accept}, "Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {init.Header().Get("Mcp-Session-Id")}}
	serve("POST", "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	sessionless := http.Header{"Accept": {accept}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"list_assets"}}
	for _, c := range []struct {
		name, method, path, body string
		header                   http.Header
	}{
		{"REST", "GET", "/api/v1/assets?limit=20", "", http.Header{}},
		{"MCP sessionless", "POST", "/mcp", testkit.MCPListPageSessionless, sessionless},
		{"MCP session", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_assets","arguments":{"limit":20}}}`, session},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			began := processCPU()
			for b.Loop() {
				serve(c.method, c.path, c.body, c.header)
			}
			// The CPU time per request, the collector's included, as
			// bench/compare reads the server's: steadier than ns/op on
			// a machine other work shares.
			if cpu := processCPU() - began; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
