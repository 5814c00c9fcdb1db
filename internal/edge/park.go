package edge

import (
	"context"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/parking"
	"github.com/mediamock/mediamock/sim"
)

// A long poll whose wait is parked (sim.ErrParked) is served again when
// there is something to look at: its job changed, the clock jumped, its
// wait ended, the client went or the server is stopping. With a parking
// listener (Env.Parking, package parking) its connection is taken from
// net/http and it waits without a goroutine of net/http's; without one,
// or when its connection cannot be taken (TLS, HTTP/2), it waits where it
// is, on the goroutine that serves it: the plain fallback.

// parked is a long poll whose wait is parked.
type parked struct {
	env *Env
	w   *Writer
	r   *http.Request // the request, for the exchange's journal
	// ctx is the front's context of the call, as served again: it ends
	// when the client goes.
	ctx  context.Context
	pk   *sim.Park
	next func(*Writer, context.Context)
	// inline: the poll waits on the goroutine that serves it.
	inline bool
	conn   *parking.Conn // the detached connection, when not inline
	ended  atomic.Bool
}

// CanPark reports whether a request's wait may be parked: a GET that names
// a wait (a list page takes no park with them), meets no fault (its
// answer is written by the parking's writer, as net/http writes it), and
// may be taken from net/http (parking.Listener.Parkable). A request that
// cannot park waits as before.
func (w *Writer) CanPark(r *http.Request) bool {
	env := w.env
	if env.Parking == nil || r.Method != http.MethodGet || !strings.Contains(r.URL.RawQuery, "wait_seconds") || env.Stop.Err() != nil {
		return false
	}
	if w.Faultable() || env.Evolve && w.faults.class != "" && !w.faults.off {
		return false
	}
	return env.Parking.Parkable(w.ResponseWriter, r)
}

// Park takes over a request whose wait was parked in pk (sim.ErrParked);
// ctx is the context the front served it with (sim.WithPark's). next
// serves it again, with that context as it then is (it ends when the
// client goes), once there is something to look at; it may park it again.
// The caller returns at once. A request parked on a connection that can be
// taken from net/http waits without its goroutine; any other waits here.
func (w *Writer) Park(ctx context.Context, pk *sim.Park, next func(*Writer, context.Context)) {
	if p := w.park; p != nil { // parked again while served again
		p.next = next
		return
	}
	p := &parked{env: w.env, w: w, r: w.req, ctx: ctx, pk: pk, next: next}
	w.park = p
	if pg := w.env.Parking; pg != nil {
		if c, ok := pg.Detach(w.ResponseWriter, w.req, ctx); ok {
			p.conn, p.r = c, c.Request()
			p.ctx = p.r.Context()
			w.ResponseWriter, w.req = c.Writer(), p.r
			go p.wait()
			return
		}
	}
	p.inline = true
	for p.next != nil {
		next := p.next
		p.next = nil
		p.waitOnce()
		next(w, p.ctx)
	}
	w.park = nil
	pk.End()
}

// waitOnce waits until the parked wait has something to look at.
func (p *parked) waitOnce() {
	ctx, cancel := p.env.UntilStop(p.ctx)
	defer cancel()
	if until := p.pk.Until(); !until.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, until)
		defer stop()
	}
	p.env.Eng.ParkWait(ctx, p.pk)
}

// wait is the one goroutine of a detached poll, at a shallow stack: it
// sleeps on the connection (watching for the client hanging up) until
// something wakes it, serves the request again, and sleeps again while
// the poll is parked again.
func (p *parked) wait() {
	defer func() {
		if v := recover(); v != nil {
			p.env.Log.Error("panic serving a parked long poll", "request_id", p.w.Header().Get("X-Request-Id"), "panic", v, "stack", string(debug.Stack()))
			p.conn.Close()
			p.end()
		}
	}()
	for p.next != nil {
		p.sleep()
		next := p.next
		p.next = nil
		next(p.w, p.ctx)
	}
	p.finish()
}

// sleep waits, without a goroutine more, until the parked wait has
// something to look at: the engine wakes the connection's Sleep when the
// job changes, the clock jumps or the engine closes; a timer at the wall-
// clock deadline of the wait wakes it too, and the server's stop
// (Env.Parking's WakeAll, which the server calls when it begins to stop:
// a poll that sleeps after sees the stop itself); the client hanging up
// ends it.
func (p *parked) sleep() {
	wake := p.conn.Wake
	stop := p.env.Eng.ParkNotify(p.pk, wake)
	if p.env.Stop.Err() != nil {
		wake()
	}
	var timer *time.Timer
	if until := p.pk.Until(); !until.IsZero() {
		timer = time.AfterFunc(time.Until(until), wake)
	}
	p.conn.Sleep()
	if timer != nil {
		timer.Stop()
	}
	stop()
}

// end takes an answered (or abandoned) poll out of the open ones.
func (p *parked) end() {
	if p.ended.CompareAndSwap(false, true) {
		p.pk.End()
	}
}

// finish ends the exchange of an answered poll: the journal and the
// metrics, then the answer on the connection, which goes back to net/http
// when the client keeps it.
func (p *parked) finish() {
	p.env.finishServe(p.w, p.r, p.w.started)
	p.end() // the poll is answered: it no longer counts as open
	p.conn.Finish(p.env.Stop.Err() != nil)
}
