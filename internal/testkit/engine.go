package testkit

import (
	"path/filepath"
	"testing"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

// Engine opens an engine on the default fixture in t's temporary folder, its
// clock manual at sim.DefaultEpoch (nothing moves but what the test moves),
// and closes it when the test ends. cfg, when given, changes the
// configuration before it opens.
func Engine(t testing.TB, cfg ...func(*sim.Config)) *sim.Engine {
	t.Helper()
	world, err := fixtures.Load("", 0)
	if err != nil {
		t.Fatalf("load the default fixture: %v", err)
	}
	c := sim.Config{Path: filepath.Join(t.TempDir(), "state.db"), World: world,
		Clock: sim.NewClock(sim.ClockManual, sim.DefaultEpoch, nil)}
	for _, f := range cfg {
		f(&c)
	}
	eng, err := sim.Open(c)
	if err != nil {
		t.Fatalf("open the engine: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}
