package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// populate adds n completed assets to a workspace in large transactions:
// images, videos, voice and music in turn, one in 1000 in project 1, one in
// 100 000 with "needle" in its prompt.
func populate(b *testing.B, e *Engine, ws uint64, n int) {
	b.Helper()
	kinds := []string{KindImage, KindVideo, KindVoice, KindMusic}
	for done := 0; done < n; {
		batch := min(n-done, 50_000)
		err := e.db.Update(func(btx *bolt.Tx) error {
			t := e.newTx(btx)
			for i := 0; i < batch; i++ {
				k := done + i
				a := &Asset{WorkspaceID: ws, Source: SourceGeneration, Kind: kinds[k%len(kinds)], Status: StatusCompleted,
					Model: "imagen-4", Prompt: fmt.Sprintf("prompt number %d of the benchmark", k), Credits: 6,
					MimeType: "image/png", Width: 1024, Height: 1024, CreatedAt: StampOf(t.now)}
				if k%1000 == 0 {
					a.ProjectID = 1
				}
				if k%100_000 == 0 {
					a.Prompt = "the needle in the haystack"
				}
				if k%7 == 0 {
					a.Status = StatusFailed
				}
				if err := t.insertAsset(a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += batch
	}
}

// BenchmarkListAssets measures a page of 20 at 1k and at 1M assets, for
// each kind of filter: the cost should stay flat as the library grows.
func BenchmarkListAssets(b *testing.B) {
	for _, size := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("assets=%d", size), func(b *testing.B) {
			e := newEngine(b, engineOpts{})
			p := principal(b, e, "mk_test_business")
			populate(b, e, p.WorkspaceID, size)
			for _, q := range []struct {
				name string
				q    AssetQuery
			}{
				{"unfiltered", AssetQuery{}},
				{"kind=audio", AssetQuery{Kind: "audio"}},
				{"status=failed", AssetQuery{Status: StatusFailed}},
				{"kind=image&status=failed", AssetQuery{Kind: "image", Status: StatusFailed}},
				{"project", AssetQuery{ProjectID: 1}},
				{"query=number 5", AssetQuery{Query: "number 5"}},
				{"query=needle (rare)", AssetQuery{Query: "needle"}},
			} {
				b.Run(q.name, func(b *testing.B) {
					q.q.Limit = 20
					b.ReportAllocs()
					for b.Loop() {
						pg, err := e.ListAssets(p, q.q)
						if err != nil || len(pg.Data) == 0 {
							b.Fatal(err, len(pg.Data))
						}
					}
				})
			}
		})
	}
}

// BenchmarkCreateGeneration is the engine's cost of a create (checks,
// charge, assets, indexes, ledger, schedule, commit), ephemeral and durable.
func BenchmarkCreateGeneration(b *testing.B) {
	for _, durable := range []bool{false, true} {
		b.Run(map[bool]string{false: "ephemeral", true: "durable"}[durable], func(b *testing.B) {
			e := newEngine(b, engineOpts{durable: durable})
			p := principal(b, e, "mk_test_business")
			if _, err := e.GrantCredits(p.WorkspaceID, 1<<40, "bench"); err != nil {
				b.Fatal(err)
			}
			req := GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a benchmark"}
			b.SetParallelism(16)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.CreateGeneration(context.Background(), p, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkCreateGroup is the writer's cost of a creation with 1 and with
// 32 creators at once: a commit's fixed cost (pages written, buckets
// opened) falls on one creation, or is shared by a group. It reports the
// pages bbolt writes per commit and the creations per commit.
//
//	go test -run '^$' -bench CreateGroup -benchmem ./sim/
func BenchmarkCreateGroup(b *testing.B) {
	for _, creators := range []int{1, 32} {
		b.Run(fmt.Sprintf("creators=%d", creators), func(b *testing.B) {
			e := newEngine(b, engineOpts{})
			p := principal(b, e, "mk_test_business")
			if _, err := e.GrantCredits(p.WorkspaceID, 1<<40, "bench"); err != nil {
				b.Fatal(err)
			}
			req := GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a load test of lighthouses", AspectRatio: "16:9"}
			s0, c0 := e.db.Stats(), e.db.Commits()
			b.ReportAllocs()
			b.ResetTimer()
			if creators == 1 {
				for b.Loop() {
					if _, err := e.CreateGeneration(context.Background(), p, req); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(creators / runtime.GOMAXPROCS(0))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := e.CreateGeneration(context.Background(), p, req); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.StopTimer()
			s1 := e.db.Stats()
			d := s1.TxStats.Sub(&s0.TxStats)
			if n := e.db.Commits() - c0; n > 0 {
				b.ReportMetric(float64(d.GetWrite())/float64(n), "pages/commit")
				b.ReportMetric(float64(b.N)/float64(n), "creations/commit")
			}
		})
	}
}

// bigWorld is the default world and one more workspace with n made-up
// library assets (and 20 projects they belong to).
func bigWorld(tb testing.TB, n int) *fixtures.World {
	tb.Helper()
	data := fmt.Sprintf(`{"extends": "default", "workspaces": [{"name": "Big Library", "plan": "business", "credits": 1000,
		"api_keys": [{"token": "mk_test_big_library", "scopes": ["read", "generate"]}],
		"projects": {"count": 20}, "assets": {"count": %d}}]}`, n)
	w, err := fixtures.Parse("big.json", []byte(data), 0)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// BenchmarkSeed measures seeding a new state file from fixtures with a
// library of 10k and 100k assets (1M with SIM_BENCH_1M=1), per record
// written: the cost per record should not grow with the library.
//
//	SIM_BENCH_1M=1 go test -run XXX -bench Seed -benchtime 1x ./sim/
func BenchmarkSeed(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if os.Getenv("SIM_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("assets=%d", n), func(b *testing.B) {
			w := bigWorld(b, n)
			dir := b.TempDir()
			var records int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				path := filepath.Join(dir, fmt.Sprintf("state-%d.db", i))
				e, err := Open(Config{Path: path, World: w, Clock: NewClock(ClockManual, DefaultEpoch, nil)})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				records += e.db.LastBulk().Records
				e.Close()
				os.Remove(path)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
		})
	}
}

// BenchmarkAddWorkspace costs the same beside 1 and 10,000 workspaces.
func BenchmarkAddWorkspace(b *testing.B) {
	for _, existing := range []int{1, 10000} {
		b.Run(fmt.Sprintf("workspaces=%d", existing), func(b *testing.B) {
			e := newEngine(b, engineOpts{})
			for i := 0; i < existing; i++ {
				if _, err := e.AddWorkspace(WorkspaceSpec{Plan: "free"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.AddWorkspace(WorkspaceSpec{Plan: "free"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
