package sim

import (
	"context"
	"time"
)

// RateFlushInterval is how soon requests counted by reads reach the state
// file while Drive runs.
const RateFlushInterval = 200 * time.Millisecond

// Drive applies due events on time while the clock is real (in the other
// modes every move of the clock applies them itself), and every
// RateFlushInterval writes the requests counted by reads (a kill -9 keeps
// them) and releases the state file's mapped pages. It returns when stop
// ends; a server runs it in a goroutine of its own for its whole life, and
// closes the engine only after it returned.
//
// It is the one place the engine waits on wall time: for the real clock's
// next due event, never to move the simulation.
func (e *Engine) Drive(stop context.Context) {
	flush := time.NewTicker(RateFlushInterval)
	defer flush.Stop()
	e.drive(stop, flush.C, wallTimer)
}

// A waiter starts a wait of d of wall time: a channel that delivers when
// it is over, and a function that cancels it.
type waiter func(d time.Duration) (<-chan time.Time, func() bool)

// wallTimer waits on the wall clock.
func wallTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

func noWait() bool { return false }

// drive is Drive with its wall time given: flush ticks, wait starts the
// wait for the next due event (tests give both).
func (e *Engine) drive(stop context.Context, flush <-chan time.Time, wait waiter) {
	for {
		next, ok, changed := e.NextDue()
		var fire <-chan time.Time
		cancel := noWait
		if ok && e.clock.Mode() == ClockReal {
			if d := next.Sub(e.clock.Now()); d > 0 {
				fire, cancel = wait(d)
			} else if err := e.settle(); err == nil {
				continue
			} else if stop.Err() != nil {
				return
			} else {
				e.log.Error("apply due events", "err", err)
				fire, cancel = wait(time.Second) // try again in a second rather than spin
			}
		}
		select {
		case <-fire:
		case <-changed:
		case <-e.clock.Changed():
		case <-flush:
			if err := e.FlushRates(); err != nil && stop.Err() == nil {
				e.log.Error("save rate windows", "err", err)
			}
			if err := e.ReleaseMapped(); err != nil && stop.Err() == nil {
				e.log.Warn("release the state file's mapped pages", "err", err)
			}
		case <-stop.Done():
			cancel()
			return
		}
		cancel()
	}
}
