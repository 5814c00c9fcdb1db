package sim

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkSandboxFromBigLibrary creates a sandbox from a fixture
// workspace with a large library while another workspace writes (a credit
// grant, one write at a time, as fast as the writer answers), and reports
// the time the creator waits (ms/create), the cost per asset copied, and
// the other workspace's write latency during the copy (p50, p99, max),
// beside the same writes on an idle server; then the same for a reset and
// a delete of the sandbox (ms/reset, reset-p99-ms, ms/delete, ...). "one write" is the copy as it
// was before batches: the whole library in the write that creates the
// sandbox.
//
//	go test -run XXX -bench SandboxFromBigLibrary -benchtime 1x ./sim/
//	SIM_BENCH_LIBRARY=200000 go test -run XXX -bench 'SandboxFromBigLibrary/batched' -benchtime 1x ./sim/
func BenchmarkSandboxFromBigLibrary(b *testing.B) {
	sizes := []int{20_000}
	if s := os.Getenv("SIM_BENCH_LIBRARY"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		w := bigWorld(b, n)
		for _, v := range []struct {
			name string
			copy int
		}{{"batched", 0}, {"one write", 1 << 30}} {
			b.Run(fmt.Sprintf("%s/assets=%d", v.name, n), func(b *testing.B) {
				e := newEngine(b, engineOpts{world: w, copy: v.copy})
				other := principal(b, e, tokBusiness).WorkspaceID
				idle := writeLatencies(b, e, other, nil)
				var during, resets, deletes []time.Duration
				var resetTime, deleteTime time.Duration
				for b.Loop() {
					var sb Sandbox
					during = append(during, writeLatencies(b, e, other, func() {
						var err error
						if sb, err = e.CreateSandbox(SandboxSpec{From: bigLibrary}, 1<<20); err != nil {
							b.Fatal(err)
						}
					})...)
					b.StopTimer()
					start := time.Now()
					resets = append(resets, writeLatencies(b, e, other, func() {
						if _, err := e.ResetSandbox(sb.ID); err != nil {
							b.Fatal(err)
						}
					})...)
					resetTime += time.Since(start)
					start = time.Now()
					deletes = append(deletes, writeLatencies(b, e, other, func() {
						if err := e.DeleteSandbox(sb.ID); err != nil {
							b.Fatal(err)
						}
					})...)
					deleteTime += time.Since(start)
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/create")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/asset")
				report := func(what string, l []time.Duration) {
					slices.Sort(l)
					if len(l) == 0 {
						return
					}
					ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
					b.ReportMetric(ms(l[len(l)/2]), what+"-p50-ms")
					b.ReportMetric(ms(l[len(l)*99/100]), what+"-p99-ms")
					b.ReportMetric(ms(l[len(l)-1]), what+"-max-ms")
				}
				report("idle", idle)
				report("during", during)
				report("reset", resets)
				report("delete", deletes)
				b.ReportMetric(float64(resetTime.Milliseconds())/float64(b.N), "ms/reset")
				b.ReportMetric(float64(deleteTime.Milliseconds())/float64(b.N), "ms/delete")
				b.ReportMetric(float64(len(during))/float64(b.N), "writes-during")
			})
		}
	}
}

// writeLatencies times workspace ws's writes, one after another, while
// work runs (nil: 200 writes on their own).
func writeLatencies(b *testing.B, e *Engine, ws uint64, work func()) []time.Duration {
	var out []time.Duration
	write := func() {
		start := time.Now()
		if _, err := e.GrantCredits(ws, 1, "bench"); err != nil {
			b.Error(err)
		}
		out = append(out, time.Since(start))
	}
	if work == nil {
		for range 200 {
			write()
		}
		return out
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				write()
			}
		}
	})
	work()
	close(stop)
	wg.Wait()
	return out
}
