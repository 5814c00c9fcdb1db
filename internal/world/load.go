// Package world loads the fixture world a server starts from: a fixture
// file, or the embedded default, made once per seed in a process (a test
// suite starts many servers from it).
package world

import (
	"fmt"
	"sync"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

var defaults sync.Map // seed -> *fixtures.World of the embedded default

// Load reads the world of the fixture file path ("" for the embedded
// default) with seed. When stop closes first it gives up at once with an
// error wrapping sim.ErrStopped: a million assets take seconds to make up,
// and what is made is dropped (nothing was written yet).
func Load(path string, seed uint64, stop <-chan struct{}) (*fixtures.World, error) {
	if stop == nil {
		return read(path, seed)
	}
	select {
	case <-stop:
		return nil, fmt.Errorf("load the fixtures: %w", sim.ErrStopped)
	default:
	}
	type result struct {
		w   *fixtures.World
		err error
	}
	done := make(chan result, 1)
	go func() {
		w, err := read(path, seed)
		done <- result{w, err}
	}()
	select {
	case r := <-done:
		return r.w, r.err
	case <-stop:
		return nil, fmt.Errorf("load the fixtures: %w", sim.ErrStopped)
	}
}

func read(path string, seed uint64) (*fixtures.World, error) {
	if path != "" {
		return fixtures.Load(path, seed)
	}
	if w, ok := defaults.Load(seed); ok {
		return w.(*fixtures.World), nil
	}
	w, err := fixtures.Load("", seed)
	if err != nil {
		return nil, err
	}
	defaults.Store(seed, w)
	return w, nil
}
