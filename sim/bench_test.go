package sim

import (
	"context"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
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
