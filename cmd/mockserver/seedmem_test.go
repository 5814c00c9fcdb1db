package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// seedMemEnv makes this test binary a child that starts the command on
// the fixture it names, stops it once ready, and prints the heap the
// process ever took from the system (HeapSys, which the collector's
// returns do not lower) and the heap live once it was ready.
const seedMemEnv = "MOCKSERVER_TEST_SEED_MEMORY"

// readyWriter notes the live heap once the command says it is ready,
// then stops it.
type readyWriter struct {
	once   sync.Once
	cancel context.CancelFunc
	live   uint64
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "mediamock ready") {
		w.once.Do(func() {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			w.live = m.HeapAlloc
			w.cancel()
		})
	}
	return len(p), nil
}

func TestSeedMemoryChild(t *testing.T) {
	fixture := os.Getenv(seedMemEnv)
	if fixture == "" {
		t.Skip("run by TestSeedMemory")
	}
	ctx, cancel := context.WithCancel(context.Background())
	env := fakeEnv{"MOCKSERVER_ADDR": "127.0.0.1:0", "MOCKSERVER_DB": filepath.Join(t.TempDir(), "state.db"), "MOCKSERVER_FIXTURES": fixture}
	ready := &readyWriter{cancel: cancel}
	if code := Run(ctx, nil, env.get, nil, io.Discard, ready); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("heap_sys=%d heap_live=%d\n", m.HeapSys, ready.live)
}

// seedHeap starts the command on a library of n assets in a process of
// its own and returns the heap that process took, and the heap live once
// it was ready (the server's own structures, the fixtures among them).
func seedHeap(t *testing.T, n int) (peak, live uint64) {
	t.Helper()
	fixture := filepath.Join(t.TempDir(), "world.json")
	if err := os.WriteFile(fixture, []byte(fmt.Sprintf(`{"extends": "default", "workspaces": [{"name": "Big", "plan": "business",
		"api_keys": [{"token": "mk_test_seed_memory", "scopes": ["read"]}], "assets": {"count": %d}}]}`, n)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSeedMemoryChild$", "-test.v")
	cmd.Env = append(os.Environ(), seedMemEnv+"="+fixture)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	i := strings.Index(string(out), "heap_sys=")
	if i < 0 {
		t.Fatalf("no figure from the child:\n%s", out)
	}
	if _, err := fmt.Sscanf(string(out[i:]), "heap_sys=%d heap_live=%d", &peak, &live); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return peak, live
}

// TestSeedMemory: the memory a start keeps does not grow with the library
// it seeds: the library is made up a chunk at a time as it is written, and
// made up again for a reset, never held. It reports the figures (go test
// -v -run SeedMemory).
func TestSeedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds large libraries in processes of their own")
	}
	const small, large = 20_000, 200_000
	peakA, liveA := seedHeap(t, small)
	peakB, liveB := seedHeap(t, large)
	t.Logf("%d assets: heap %d MB at most, %d MB live when ready; %d assets: %d MB at most, %d MB live when ready",
		small, peakA>>20, liveA>>20, large, peakB>>20, liveB>>20)
	// Held whole, the 180,000 more assets were 34 MB more of live heap.
	if growth := (int64(liveB) - int64(liveA)) >> 20; growth > 8 {
		t.Errorf("the live heap grew by %d MB for %d more assets, want at most 8", growth, large-small)
	}
}
