package sim

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Event is work due at a time.
type Event struct {
	Kind EventKind `json:"kind"`
	ID   uint64    `json:"id"`
	Sub  int       `json:"sub,omitempty"`
}

// EventKind is what a due event does. Kinds are stored in the state file
// by name: a name never changes, or older files would not read.
type EventKind string

// The kinds of due events.
const (
	EventJobProcess EventKind = "job.process" // a job leaves the provider's queue: processing starts
	EventJobFinish  EventKind = "job.finish"  // a job completes or fails
	EventPubStart   EventKind = "pub.start"   // a scheduled publication starts delivering
	EventPubDeliver EventKind = "pub.deliver" // one delivery of a publication (Sub) lands
)

// eventSteps applies each kind of due event; a kind missing here is
// unknown, to apply and to the checks of snapshots.
var eventSteps = map[EventKind]func(t *tx, k []byte, ev Event) error{
	EventJobProcess: (*tx).stepJob,
	EventJobFinish:  (*tx).stepJob,
	EventPubStart:   func(t *tx, _ []byte, ev Event) error { return t.stepPublication(ev) },
	EventPubDeliver: func(t *tx, _ []byte, ev Event) error { return t.stepPublication(ev) },
}

// schedule stores ev, due at at, and returns its key.
func (t *tx) schedule(at time.Time, ev Event) ([]byte, error) {
	b := t.b(bDue)
	seq, err := b.NextSequence()
	if err != nil {
		return nil, err
	}
	k := idKey(uint64(at.UnixNano()), seq) // kept by the job: not on the stack
	return k, putJSON(b, k, ev)
}

func (t *tx) unschedule(k []byte) error {
	if k == nil {
		return nil
	}
	return t.b(bDue).Delete(k)
}

// dueBatch bounds the due events one transaction applies: a clock jump over
// many pending jobs is applied in several transactions.
const dueBatch = 4096

// applyDue applies the events due by t.now, in order of due time, at most
// limit of them, and reports whether more are due. Each runs at its own due
// time, so timestamps are those of a life lived in real time.
func (t *tx) applyDue(limit int) (more bool, err error) {
	now := t.now
	defer func() { t.now = now }()
	b := t.b(bDue)
	for n := 0; ; n++ {
		k, v := b.Cursor().First()
		if k == nil || len(k) < 8 || int64(getU64(k[:8])) > now.UnixNano() {
			return false, nil
		}
		if n == limit {
			return true, nil
		}
		kc := bytes.Clone(k)
		var ev Event
		err := jsonUnmarshal(v, &ev)
		if err := b.Delete(kc); err != nil {
			return false, err
		}
		t.now = Stamp(getU64(kc[:8])).Time()
		if err == nil {
			err = t.applySafely(kc, ev)
		}
		if err != nil {
			// A damaged record must not stop the simulation: the event is
			// dropped and said so.
			t.e.log.Error("dropped an event that cannot be applied", "event", ev.Kind, "id", ev.ID, "err", err)
		}
	}
}

// applySafely applies one event; a panic is the event's failure.
func (t *tx) applySafely(k []byte, ev Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return t.apply(k, ev)
}

func (t *tx) apply(k []byte, ev Event) error {
	step, ok := eventSteps[ev.Kind]
	if !ok {
		return fmt.Errorf("unknown event kind %q", ev.Kind)
	}
	return step(t, k, ev)
}

// settle applies every event due by now, if any.
// settleMove settles after a jump of the clock; a real clock also saves
// its new offset, which no write may follow soon.
func (e *Engine) settleMove() error {
	if _, real := e.clock.offset(); real {
		return e.saveClock()
	}
	return e.settle()
}

func (e *Engine) settle() error {
	if e.nextDue.Load() > e.clock.Now().UnixNano() {
		return nil
	}
	return e.update(func(*tx) error { return nil })
}

// Settle applies every event due by the clock's current time. Drivers of a
// real clock call it when NextDue has passed.
func (e *Engine) Settle() error { return e.settle() }

// NextDue returns when the earliest pending event is due, and a channel
// closed when that changes.
func (e *Engine) NextDue() (time.Time, bool, <-chan struct{}) {
	e.dueMu.Lock()
	ch := e.dueChanged
	e.dueMu.Unlock()
	n := e.nextDue.Load()
	if n == noDue {
		return time.Time{}, false, ch
	}
	return Stamp(n).Time(), true, ch
}

const noDue = int64(^uint64(0) >> 1)

// firstDue reads when the earliest pending event is due (noDue when none).
func firstDue(btx *bolt.Tx) int64 {
	if k, _ := btx.Bucket(bDue).Cursor().First(); k != nil {
		return int64(getU64(k[:8]))
	}
	return noDue
}

// publishNextDue records when the earliest pending event is due and wakes
// whoever waits for that to change.
func (e *Engine) publishNextDue(n int64) {
	if e.nextDue.Swap(n) != n {
		e.dueMu.Lock()
		close(e.dueChanged)
		e.dueChanged = make(chan struct{})
		e.dueMu.Unlock()
	}
}

// Advance moves the clock forward by d and applies everything due, in order.
func (e *Engine) Advance(d time.Duration) (time.Time, error) {
	t, err := e.clock.advance(d)
	if err != nil {
		return time.Time{}, &Error{Kind: EINVALID, Code: "invalid_clock_move", Message: err.Error()}
	}
	return t, e.settleMove()
}

// SetTime moves the clock to t (never backwards) and applies everything due.
func (e *Engine) SetTime(t time.Time) error {
	if err := e.clock.set(t); err != nil {
		return &Error{Kind: EINVALID, Code: "invalid_clock_move", Message: err.Error()}
	}
	return e.settleMove()
}

// advanceTo moves the clock to t if it is later, and applies what is due.
func (e *Engine) advanceTo(t time.Time) error {
	e.clock.advanceTo(t)
	return e.settleMove()
}
