package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// seedMemEnv makes this test binary a child that starts the command on
// the fixture it names, stops it once ready, and prints the heap the
// process ever took from the system (HeapSys, which the collector's
// returns do not lower).
const seedMemEnv = "MOCKSERVER_TEST_SEED_MEMORY"

// readyWriter cancels once the command says it is ready.
type readyWriter struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "mediamock ready") {
		w.once.Do(w.cancel)
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
	if code := Run(ctx, nil, env.get, nil, io.Discard, &readyWriter{cancel: cancel}); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("heap_sys=%d\n", m.HeapSys)
}

// TestSeedMemory: seeding a large library takes a heap in proportion to
// the library (its fixtures are made up in memory, and kept for resets),
// not five times that (the collector relaxed for a fast start). It reports
// the figure per million assets (go test -v -run SeedMemory).
func TestSeedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a large library in a process of its own")
	}
	const assets = 200_000
	fixture := filepath.Join(t.TempDir(), "world.json")
	if err := os.WriteFile(fixture, []byte(fmt.Sprintf(`{"extends": "default", "workspaces": [{"name": "Big", "plan": "business",
		"api_keys": [{"token": "mk_test_seed_memory", "scopes": ["read"]}], "assets": {"count": %d}}]}`, assets)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSeedMemoryChild$", "-test.v")
	cmd.Env = append(os.Environ(), seedMemEnv+"="+fixture)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "heap_sys=")
	if !ok {
		t.Fatalf("no figure from the child:\n%s", out)
	}
	heap, err := strconv.ParseUint(strings.Fields(after)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	perMillion := float64(heap) / assets * 1e6 / (1 << 20)
	t.Logf("seeding %d assets took a heap of %d MB: %.0f MB per million assets", assets, heap>>20, perMillion)
	// The made-up library is about 190 MB per million, the start's own
	// heap about 20 MB: about 650 MB per million at this size with the
	// seed's garbage, 1,180 with the collector relaxed as for a small start.
	if perMillion > 900 {
		t.Errorf("%.0f MB of heap per million assets, want at most 900", perMillion)
	}
}
