package sim

import (
	"fmt"
	"sync"
	"time"
)

// ClockMode says how the simulated clock moves.
type ClockMode string

// The clock modes.
const (
	// ClockReal follows wall time from where the simulation left off.
	ClockReal ClockMode = "real"
	// ClockManual moves only when told (Advance, SetTime, the control API).
	ClockManual ClockMode = "manual"
	// ClockVirtual is manual, but a client that waits (wait_seconds) moves
	// time forward for it, up to the earlier of its wait and the next event.
	ClockVirtual ClockMode = "virtual"
)

// ParseClockMode checks a clock mode name.
func ParseClockMode(s string) (ClockMode, error) {
	switch m := ClockMode(s); m {
	case ClockReal, ClockManual, ClockVirtual:
		return m, nil
	}
	return "", fmt.Errorf("unknown clock mode %q (want real, manual or virtual)", s)
}

// MaxTime is the latest time the clock may reach: far beyond any test, and
// well inside what a Stamp (Unix nanoseconds) holds.
var MaxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultEpoch is where a fresh simulation's clock starts unless told otherwise.
var DefaultEpoch = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// Clock is the one source of time of the simulation. The wall-time source is
// injected: the engine itself never reads the machine's clock.
type Clock struct {
	mu      sync.Mutex
	mode    ClockMode
	base    time.Time // simulated time at the anchor
	anchor  time.Time // wall time at the anchor (real mode)
	wall    func() time.Time
	changed chan struct{} // closed and replaced whenever time jumps
	wakes   wakeSet       // parked waits' functions to call at the next jump
	// jumped hears every jump, under mu.
	jumped func(now time.Time, mode ClockMode)
}

// NewClock returns a clock in the given mode starting at start. wall reads
// wall time; it is only used in real mode and may be nil otherwise.
func NewClock(mode ClockMode, start time.Time, wall func() time.Time) *Clock {
	base := start.UTC()
	if mode != ClockReal {
		// A clock that moves only when told starts on a whole second; a
		// real one starts where the wall is, with no offset.
		base = base.Truncate(time.Second)
	}
	c := &Clock{mode: mode, base: base, wall: wall, changed: make(chan struct{})}
	if wall != nil {
		c.anchor = wall()
	}
	return c
}

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now()
}

func (c *Clock) now() time.Time {
	if c.mode == ClockReal && c.wall != nil {
		return c.base.Add(c.wall().Sub(c.anchor))
	}
	return c.base
}

// Mode returns the clock mode.
func (c *Clock) Mode() ClockMode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode
}

// SetMode switches the mode, keeping the current simulated time.
func (c *Clock) SetMode(m ClockMode) error {
	if _, err := ParseClockMode(string(m)); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m == ClockReal && c.wall == nil {
		return fmt.Errorf("real clock mode needs a wall clock")
	}
	c.rebase(c.now())
	c.mode = m
	c.signal()
	return nil
}

// advance moves the clock forward by d. It never moves backwards.
func (c *Clock) advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("cannot move the clock backwards (advance by %s)", d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if d > MaxTime.Sub(now) {
		return time.Time{}, fmt.Errorf("cannot move the clock past %s (advance by %s from %s)", FormatTime(MaxTime), d, FormatTime(now))
	}
	t := now.Add(d)
	c.rebase(t)
	c.signal()
	return t, nil
}

// advanceTo moves the clock to t if t is later than now.
func (c *Clock) advanceTo(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); !t.After(now) {
		return now
	}
	c.rebase(t)
	c.signal()
	return t
}

// set moves the clock to t, which must not be earlier than now.
func (c *Clock) set(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); t.Before(now) {
		return fmt.Errorf("cannot move the clock backwards from %s to %s", FormatTime(now), FormatTime(t))
	}
	if t.After(MaxTime) {
		return fmt.Errorf("cannot move the clock past %s", FormatTime(MaxTime))
	}
	c.rebase(t)
	c.signal()
	return nil
}

// restore puts the clock at t regardless of direction (used when state is
// loaded from disk or restored from a snapshot).
func (c *Clock) restore(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rebase(t)
	c.signal()
}

// Offset is how far a real clock is from wall time (what advances, sets
// and switches of mode added; ResyncClock drops it), and false in the
// other modes.
func (c *Clock) Offset() (time.Duration, bool) { return c.offset() }

func (c *Clock) offset() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode != ClockReal || c.wall == nil {
		return 0, false
	}
	return c.base.Sub(c.anchor), true
}

// resume puts a real clock back at wall time plus the offset it had when
// the state was last written (the time the server was down counts, as it
// does for the service), but never before last, the time of that write.
func (c *Clock) resume(off time.Duration, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.wall().Add(off)
	if t.Before(last) {
		t = last
	}
	c.rebase(t)
	c.signal()
}

// resync drops the offset of a real clock: it reads wall time again, even
// if that is earlier than now.
func (c *Clock) resync() (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode != ClockReal || c.wall == nil {
		return time.Time{}, fmt.Errorf("only a real clock follows the wall clock (the mode is %s; switch it with PUT /_mock/clock/mode)", c.mode)
	}
	now := c.wall()
	c.base, c.anchor = now, now
	c.signal()
	return now, nil
}

func (c *Clock) rebase(t time.Time) {
	c.base = t
	if c.wall != nil {
		c.anchor = c.wall()
	}
}

// Changed returns a channel closed at the next jump of the clock.
func (c *Clock) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *Clock) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
	c.wakes.fire()
	c.wakes = nil
	if c.jumped != nil {
		c.jumped(c.now(), c.mode)
	}
}

// notify leaves f to be called at the next jump, the one ch (of Changed)
// is closed at; false when the clock has jumped since (ch is closed).
func (c *Clock) notify(ch <-chan struct{}, f *func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch != c.changed {
		return false
	}
	if c.wakes == nil {
		c.wakes = wakeSet{}
	}
	c.wakes[f] = struct{}{}
	return true
}

// wakeParked calls every function left by notify, as a jump would.
func (c *Clock) wakeParked() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wakes.fire()
	c.wakes = nil
}

// unnotify takes f back, if it was not called yet.
func (c *Clock) unnotify(f *func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.wakes, f)
}

// onJump makes f hear of every jump of the clock and change of its mode.
// It is called under the clock's lock: it must not use the clock.
func (c *Clock) onJump(f func(now time.Time, mode ClockMode)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jumped = f
}

// TimeLayout is the wire format of timestamps: ISO 8601 with a UTC offset.
const TimeLayout = "2006-01-02T15:04:05-07:00"

// FormatTime renders t in the wire format, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// FormatTimeExact renders t like FormatTime, with the fraction of a second
// when there is one.
func FormatTimeExact(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999-07:00")
}

// SetClockMode switches the clock between real, manual and virtual.
func (e *Engine) SetClockMode(m ClockMode) error {
	if err := e.clock.SetMode(m); err != nil {
		return &Error{Kind: EINVALID, Code: "validation_failed", Message: err.Error()}
	}
	return e.saveClock()
}

// ResyncClock puts a real clock back on the wall clock: the offset that
// advances, sets and "next event" jumps added is dropped, and the clock may
// move backwards by it. Nothing is lost: records keep their times, and what
// is due later than the new now happens when the clock reaches it. Only in
// real mode (400 invalid_clock_move otherwise).
func (e *Engine) ResyncClock() (time.Time, error) {
	t, err := e.clock.resync()
	if err != nil {
		return time.Time{}, &Error{Kind: EINVALID, Code: "invalid_clock_move", Message: err.Error()}
	}
	return t, e.saveClock()
}

// saveClock writes the clock (and a real clock's offset) to the state now,
// and applies what is due: a real clock's offset survives a restart even
// when the move made nothing due.
func (e *Engine) saveClock() error { return e.update(func(*tx) error { return nil }) }
