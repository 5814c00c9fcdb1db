package sim

import (
	"context"
	"errors"
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
	// wakes are the parked waits' functions to call at the change
	// (Engine.ParkNotify).
	wakes wakeSet
}

// wakeSet holds the functions parked waits leave to be called at a change
// (Engine.ParkNotify), by their address, so that each can leave again.
type wakeSet map[*func()]struct{}

// fire calls every function of the set, on a goroutine of its own: a
// change that thousands of parked polls wait for does not hold up the
// writer or the clock that made it, and the functions may take locks of
// their own.
func (s wakeSet) fire() {
	if len(s) == 0 {
		return
	}
	go func() {
		for f := range s {
			(*f)()
		}
	}()
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
		w.wakes.fire()
		delete(h.chans, id)
	}
}

func (h *hub) wake(id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.chans[id]; w != nil {
		close(w.ch)
		w.wakes.fire()
		delete(h.chans, id)
	}
}

// notify leaves f to be called at the next change of the job, the one ch
// (of watch) is closed at; false when it has changed since (ch is closed).
func (h *hub) notify(id uint64, ch <-chan struct{}, f *func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.chans[id]
	if w == nil || w.ch != ch {
		return false
	}
	if w.wakes == nil {
		w.wakes = wakeSet{}
	}
	w.wakes[f] = struct{}{}
	return true
}

// unnotify takes f back, if it was not called yet.
func (h *hub) unnotify(id uint64, f *func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.chans[id]; w != nil {
		delete(w.wakes, f)
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

// A Park lets a front take a long poll's wait off the goroutine that
// serves it: a wait whose context carries one (WithPark) does not block
// but returns ErrParked, having taken what to wait for; the front waits
// with ParkWait, at a shallow stack and holding little, then serves the
// request again, whose read picks the wait up where it was (its deadline,
// its count among the open polls). The front calls End once the poll is
// answered. A Park serves one request; its zero value is ready.
type Park struct {
	started  bool
	job      uint64    // the job watched, 0 when none
	deadline time.Time // on the simulated clock
	until    time.Time // the wall-clock deadline of the wait's context, if it had one
	done     func()    // ends the poll's count among the open ones
	ch       <-chan struct{}
	clock    <-chan struct{} // the clock's next jump, as of the read
	release  func()
}

// ErrParked is what a wait that was handed over to its Park returns.
var ErrParked = errors.New("sim: the long poll's wait is parked")

type parkKey struct{}

// WithPark returns ctx carrying p: the waits of the engine's reads made
// with it are handed over to p instead of blocking (not on the virtual
// clock, whose waits take no time).
func WithPark(ctx context.Context, p *Park) context.Context {
	return context.WithValue(ctx, parkKey{}, p)
}

// ParkOf is the Park ctx carries, if any.
func ParkOf(ctx context.Context) *Park {
	p, _ := ctx.Value(parkKey{}).(*Park)
	return p
}

// Until is the wall-clock deadline of the parked wait's context (zero if
// it had none): a request served again keeps it.
func (p *Park) Until() time.Time { return p.until }

// End ends a parked poll that was answered: it no longer counts among
// the open polls.
func (p *Park) End() {
	if p.release != nil {
		p.release()
		p.ch, p.clock, p.release = nil, nil, nil
	}
	if p.done != nil {
		p.done()
		p.done = nil
	}
}

// ParkWait blocks until a parked wait has something to look at again: its
// job changed, the clock jumped, ctx ended (the client went, the server
// shuts down, the wall-clock deadline passed; see Until) or the engine
// closed. The front then serves the request again.
func (e *Engine) ParkWait(ctx context.Context, p *Park) {
	if p.release == nil {
		return
	}
	_ = e.waitChange(ctx, p.ch, p.clock)
	p.release()
	p.ch, p.clock, p.release = nil, nil, nil
}

// ParkNotify is ParkWait without a goroutine that blocks: it leaves wake
// to be called when the parked wait has something to look at again (its
// job changed, the clock jumped or the engine closed), at once when it has
// already; wake may be called more than once, from any goroutine, and must
// not block. The front's own reasons to serve the request again (the
// client went, the server shuts down, the wall-clock deadline of Until)
// are its own to watch. Once woken, or for one of those, the front calls
// stop, which takes wake back and ends the wait's watch, then serves the
// request again.
func (e *Engine) ParkNotify(p *Park, wake func()) (stop func()) {
	if p.release == nil {
		wake()
		return func() {}
	}
	f := &wake
	onJob := p.job != 0 && e.hub.notify(p.job, p.ch, f)
	onClock := e.clock.notify(p.clock, f)
	if (p.job != 0 && !onJob) || !onClock {
		wake()
	}
	// Close wakes every wait the clock holds, after it marks the engine
	// closed: one that came after sees the mark.
	select {
	case <-e.closed:
		wake()
	default:
	}
	return func() {
		if onJob {
			e.hub.unnotify(p.job, f)
		}
		if onClock {
			e.clock.unnotify(f)
		}
		if p.release != nil {
			p.release()
			p.ch, p.clock, p.release = nil, nil, nil
		}
	}
}

// waitFor reads a state with read until done reports it final or the wait
// ends, without polling: it sleeps until the job changes, the clock jumps or
// ctx ends. In virtual mode it moves the clock itself, to the earlier of the
// deadline and the next event, so no real time passes.
//
// Ending ctx is not an error: the caller gets the state as it is, which is
// what a long poll answers when the server shuts down.
//
// With a Park in ctx (WithPark) it does not sleep: it returns ErrParked
// with the job to watch taken, and the next call with the same Park goes
// on with the same deadline.
func waitFor[T any](ctx context.Context, e *Engine, ws, jobID uint64, wait time.Duration, read func() (T, bool, error)) (T, error) {
	deadline := e.clock.Now().Add(wait)
	pk := ParkOf(ctx)
	if pk != nil && e.clock.Mode() == ClockVirtual {
		pk = nil
	}
	if pk != nil && pk.started {
		deadline = pk.deadline
	}
	waited := pk != nil && pk.started
	for {
		var ch <-chan struct{}
		release := func() {}
		if jobID != 0 {
			ch, release = e.hub.watch(jobID)
		}
		// The clock's jump too is watched from before the read: a parked
		// wait looks at it later, from another goroutine.
		clock := e.clock.Changed()
		v, final, err := read()
		if err != nil || final || wait <= 0 || !e.clock.Now().Before(deadline) || ctx.Err() != nil {
			release()
			return v, err
		}
		if !waited {
			waited = true
			if pk != nil {
				pk.started, pk.deadline, pk.done = true, deadline, e.pollStarted()
			} else {
				defer e.pollStarted()()
			}
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
		if pk != nil {
			select {
			case <-e.closed:
				release()
				return v, nil // as a wait the closing ended
			default:
			}
			pk.job, pk.ch, pk.clock, pk.release = jobID, ch, clock, release
			pk.until, _ = ctx.Deadline()
			return v, ErrParked
		}
		err = e.waitChange(ctx, ch, clock)
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

// waitChange blocks until ch is closed, the clock jumps (clock, the
// clock's Changed as of the read), or ctx ends.
func (e *Engine) waitChange(ctx context.Context, ch, clock <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-clock:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.closed:
		return errClosed
	}
}
