package sim

import (
	"context"
	"sync"
	"time"
)

// hub wakes the waiters of a job when its state changes. An entry lives
// while someone watches: the last watcher to leave removes it.
type hub struct {
	mu    sync.Mutex
	chans map[uint64]*watchers

	// onWatch, when set, is told each job a waiter starts watching, so that
	// a test knows a long poll sleeps without polling for it. Tests set it
	// before anyone waits; it must not block. Nil outside tests.
	onWatch func(id uint64)
}

type watchers struct {
	ch chan struct{}
	n  int
}

func newHub() *hub { return &hub{chans: map[uint64]*watchers{}} }

// watch returns a channel closed at the next change of the job, and a
// function to call when no longer watching. Take it before reading the
// job's state, so that no change is missed.
func (h *hub) watch(id uint64) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.chans[id]
	if w == nil {
		w = &watchers{ch: make(chan struct{})}
		h.chans[id] = w
	}
	w.n++
	if h.onWatch != nil {
		h.onWatch(id)
	}
	return w.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.chans[id] == w {
			if w.n--; w.n == 0 {
				delete(h.chans, id)
			}
		}
	}
}

func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, w := range h.chans {
		close(w.ch)
		delete(h.chans, id)
	}
}

func (h *hub) wake(id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.chans[id]; w != nil {
		close(w.ch)
		delete(h.chans, id)
	}
}

// watching is how many jobs have waiters.
func (h *hub) watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.chans)
}

type progressKey struct{}

// WithProgress returns ctx carrying report: the engine's reads of a job
// (Generation, Encore) call it with the status they read, so that a front
// can tell its client how a long poll is going (MCP progress
// notifications). The engine does not wait for it beyond the call.
func WithProgress(ctx context.Context, report func(status string)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// reportProgress hands a status read for ctx to its progress reporter.
func reportProgress(ctx context.Context, status string) {
	if report, ok := ctx.Value(progressKey{}).(func(string)); ok {
		report(status)
	}
}

// waitFor reads a state with read until done reports it final or the wait
// ends, without polling: it sleeps until the job changes, the clock jumps or
// ctx ends. In virtual mode it moves the clock itself, to the earlier of the
// deadline and the next event, so no real time passes.
//
// Ending ctx is not an error: the caller gets the state as it is, which is
// what a long poll answers when the server shuts down.
func waitFor[T any](ctx context.Context, e *Engine, ws, jobID uint64, wait time.Duration, read func() (T, bool, error)) (T, error) {
	deadline := e.clock.Now().Add(wait)
	waited := false
	for {
		var ch <-chan struct{}
		release := func() {}
		if jobID != 0 {
			ch, release = e.hub.watch(jobID)
		}
		v, final, err := read()
		if err != nil || final || wait <= 0 || !e.clock.Now().Before(deadline) || ctx.Err() != nil {
			release()
			return v, err
		}
		if !waited {
			waited = true
			defer e.pollStarted()()
			e.cov.add(map[lifecycleNote]int{{ws, "long_poll_waited"}: 1})
		}
		if e.clock.Mode() == ClockVirtual {
			target := deadline
			if next, ok, _ := e.NextDue(); ok && next.Before(target) {
				target = next
			}
			release()
			if err := e.advanceTo(target); err != nil {
				return v, err
			}
			continue
		}
		err = e.waitChange(ctx, ch)
		release()
		if err != nil {
			v, _, rerr := read()
			if rerr != nil {
				return v, rerr
			}
			if err == errClosed || ctx.Err() != nil {
				return v, nil
			}
			return v, err
		}
	}
}

// waitChange blocks until ch is closed, the clock jumps, or ctx ends.
func (e *Engine) waitChange(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-e.clock.Changed():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.closed:
		return errClosed
	}
}
