package sim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

// Open an engine on a manual clock, start a generation, and move the clock
// to see it complete.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "sim-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	world, err := fixtures.Load("", 0) // the embedded default world
	if err != nil {
		panic(err)
	}
	e, err := sim.Open(sim.Config{Path: filepath.Join(dir, "state.db"), World: world, Seed: 42,
		Clock: sim.NewClock(sim.ClockManual, sim.DefaultEpoch, nil)})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	ctx := context.Background()
	p, _ := e.Authenticate("mk_test_all_scopes")
	g, err := e.CreateGeneration(ctx, p, sim.GenerationRequest{Modality: "image", ModelID: "imagen-4", Prompt: "a red fox"})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Status)
	if _, err := e.Advance(time.Minute); err != nil {
		panic(err)
	}
	done, err := e.Generation(ctx, p, g.Assets[0].ID, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(done.Status, done.Assets[0].Width, done.Assets[0].Height)
	// Output:
	// queued
	// completed 1024 1024
}
