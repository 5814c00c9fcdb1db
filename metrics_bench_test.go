package mediamock

import (
	"net/http/httptest"
	"os"
	"testing"
)

// BenchmarkListPageMetrics is BenchmarkListPage's page of 20 assets of a
// 10,000-asset library with the metrics on (as every server has them) and
// off, so that what counting a request costs shows in ns/op and allocs/op.
func BenchmarkListPageMetrics(b *testing.B) {
	dir := b.TempDir()
	fix := dir + "/bench.json"
	os.WriteFile(fix, []byte(`{"extends": "default",
  "plans": {"bench": {"rate_limit_per_minute": 1000000000, "publishing_allowed": true}},
  "workspaces": [{"name": "Bench", "plan": "bench", "credits": 1000000000,
    "api_keys": [{"token": "mk_test_bench", "scopes": ["read"]}], "assets": {"count": 10000}}]}`), 0o600)
	for _, on := range []bool{true, false} {
		b.Run(map[bool]string{true: "metrics on", false: "metrics off"}[on], func(b *testing.B) {
			srv, err := New(Options{DBPath: b.TempDir() + "/state.db", FixturesPath: fix, Clock: ClockManual, JournalSize: -1, NoListener: true})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			if !on {
				srv.env.Metrics = nil
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
