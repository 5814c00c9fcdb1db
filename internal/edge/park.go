package edge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// Parking takes waiting long polls off net/http. A request that waits is
// served by a goroutine of net/http's at the bottom of a deep stack, with
// the connection's buffers and a second goroutine that watches for the
// client hanging up: tens of kilobytes each. A parked poll gives its
// connection up (net/http's hijacking) and returns; it waits at a shallow
// stack, holding the request and the connection only, then is served again
// when its job changes, the clock jumps, its wait ends, the client goes or
// the server shuts down. The answer is written as net/http writes it, and a
// connection the client keeps goes back to net/http through the listener.
//
// Parking is the listener http.Server serves: the connections it accepts
// and those given back.
type Parking struct {
	net.Listener
	// WriteTimeout bounds the writing of a parked poll's answer.
	WriteTimeout time.Duration
	// Server is the server of the listener: a request another server
	// (the handler served elsewhere) took is not parked, its connection
	// would come back to the wrong one.
	Server *http.Server

	accepted chan accepted
	back     chan net.Conn
	done     chan struct{}
	dead     chan struct{} // closed when the listener accepts no more
	close    sync.Once
	parked   atomic.Int64

	mu   sync.Mutex
	open int           // polls parked or being parked
	none chan struct{} // closed when open falls to 0
}

// add counts a poll being parked; release, one that ended.
func (p *Parking) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == 0 {
		p.none = make(chan struct{})
	}
	p.open++
}

func (p *Parking) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open--; p.open == 0 {
		close(p.none)
	}
}

type accepted struct {
	c   net.Conn
	err error
}

// NewParking serves ln's connections and the connections parked polls
// give back.
func NewParking(ln net.Listener, srv *http.Server) *Parking {
	p := &Parking{Listener: ln, WriteTimeout: srv.WriteTimeout, Server: srv, accepted: make(chan accepted), back: make(chan net.Conn), done: make(chan struct{}), dead: make(chan struct{})}
	go p.accept()
	return p
}

func (p *Parking) accept() {
	defer close(p.dead)
	for {
		c, err := p.Listener.Accept()
		select {
		case p.accepted <- accepted{c, err}:
		case <-p.done:
			if c != nil {
				c.Close()
			}
			return
		}
		var t interface{ Temporary() bool }
		if err != nil && !(errors.As(err, &t) && t.Temporary()) {
			return
		}
	}
}

// Accept returns the next connection accepted or given back.
func (p *Parking) Accept() (net.Conn, error) {
	select {
	case a := <-p.accepted:
		return a.c, a.err
	case c := <-p.back:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections given back after are closed.
func (p *Parking) Close() error {
	p.close.Do(func() { close(p.done) })
	return p.Listener.Close()
}

// Parked is how many long polls are parked now.
func (p *Parking) Parked() int { return int(p.parked.Load()) }

// Wait waits until every parked poll has been answered, or ctx ends.
func (p *Parking) Wait(ctx context.Context) error {
	p.mu.Lock()
	if p.open == 0 {
		p.mu.Unlock()
		return nil
	}
	none := p.none
	p.mu.Unlock()
	select {
	case <-none:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveBack hands a connection whose exchange ended back to net/http.
func (p *Parking) giveBack(c net.Conn) {
	select {
	case p.back <- c:
	case <-p.done:
		c.Close()
	case <-p.dead: // the server stopped serving
		c.Close()
	}
}

// parked is a long poll whose wait is parked.
type parked struct {
	env  *Env
	w    *Writer
	r    *http.Request // as served again: its context ends when the client goes
	pk   *sim.Park
	next func(*Writer, *http.Request)
	// inline is set when the connection could not be taken from net/http
	// (HTTP/2, TLS, a writer that cannot be hijacked): the poll waits on
	// the goroutine that serves it, as without parking.
	inline bool

	parking  *Parking
	conn     net.Conn
	cw       *connWriter
	cancel   context.CancelFunc
	reading  chan struct{} // closed when the watch for a hang-up ends
	stopping atomic.Bool   // the watch is being stopped, not the client gone
	gone     atomic.Bool   // the client hung up
	ahead    []byte        // what the client sent after the request
	ended    atomic.Bool
}

// end takes an answered (or abandoned) poll out of the parked ones.
func (p *parked) end() {
	if p.ended.CompareAndSwap(false, true) {
		p.pk.End()
		p.parking.parked.Add(-1)
		p.parking.release()
	}
}

// CanPark reports whether a request's wait may be parked: a GET served
// over HTTP/1.1 without TLS that meets no fault (its answer is written
// here as net/http writes it; a request that cannot park waits as before).
func (w *Writer) CanPark(r *http.Request) bool {
	env := w.env
	// Only a read that names a wait may wait: the others (a list page)
	// take no park with them.
	if env.Parking == nil || r.Method != http.MethodGet || !strings.Contains(r.URL.RawQuery, "wait_seconds") || r.TLS != nil || r.ProtoMajor != 1 || r.ProtoMinor != 1 || env.Stop.Err() != nil {
		return false
	}
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != env.Parking.Server {
		return false
	}
	if w.Faultable() || env.Evolve && w.faults.class != "" && !w.faults.off {
		return false
	}
	_, ok := w.ResponseWriter.(http.Hijacker)
	return ok
}

// Park takes over a request whose wait was parked in pk (sim.ErrParked):
// next serves it again, with the request as it then is, once there is
// something to look at; it may park it again. The caller returns at once.
// A request parked on a connection that can be taken from net/http waits
// without its goroutine; any other waits here.
func (w *Writer) Park(r *http.Request, pk *sim.Park, next func(*Writer, *http.Request)) {
	if p := w.park; p != nil { // parked again while served again
		p.next = next
		return
	}
	p := &parked{env: w.env, w: w, r: r, pk: pk, next: next}
	w.park = p
	if p.detach(r) {
		return
	}
	p.inline = true
	for p.next != nil {
		next := p.next
		p.next = nil
		p.waitOnce()
		next(w, p.r)
	}
	w.park = nil
	pk.End()
}

// detach takes the connection from net/http and starts the poll's waiter.
func (p *parked) detach(r *http.Request) bool {
	pg := p.env.Parking
	if pg == nil || r.TLS != nil || r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return false
	}
	h := p.w.ResponseWriter.Header()
	// Counted before net/http lets the connection go: a shutdown waits
	// for one or the other.
	pg.add()
	conn, buf, err := http.NewResponseController(p.w.ResponseWriter).Hijack()
	if err != nil {
		pg.release()
		return false
	}
	if n := buf.Reader.Buffered(); n > 0 {
		ahead, _ := buf.Reader.Peek(n)
		p.ahead = bytes.Clone(ahead)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	p.parking, p.conn, p.cancel = pg, conn, cancel
	p.cw = &connWriter{conn: conn, h: h}
	p.r = r.WithContext(ctx)
	p.w.ResponseWriter, p.w.req = p.cw, p.r
	p.reading = make(chan struct{})
	pg.parked.Add(1)
	go p.watch()
	go p.wait()
	return true
}

// watch reads from the connection to see the client hang up, as net/http
// does while a handler runs: a byte that comes is the client's next
// request, kept for when the connection goes back.
func (p *parked) watch() {
	defer close(p.reading)
	var b [1]byte
	n, err := p.conn.Read(b[:])
	if n == 1 {
		p.ahead = append(p.ahead, b[0])
		return
	}
	if err != nil && !p.stopping.Load() {
		p.gone.Store(true)
		p.cancel()
	}
}

// waitOnce waits until the parked wait has something to look at.
func (p *parked) waitOnce() {
	ctx, cancel := p.env.UntilStop(p.r.Context())
	defer cancel()
	if until := p.pk.Until(); !until.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, until)
		defer stop()
	}
	p.env.Eng.ParkWait(ctx, p.pk)
}

// wait is the waiter of a detached poll: a goroutine of its own, at a
// shallow stack, for each time the poll is parked.
func (p *parked) wait() {
	p.waitOnce()
	defer func() {
		if v := recover(); v != nil {
			p.env.Log.Error("panic serving a parked long poll", "request_id", p.w.Header().Get("X-Request-Id"), "panic", v, "stack", string(debug.Stack()))
			p.conn.Close()
			p.cancel()
			p.end()
		}
	}()
	next := p.next
	p.next = nil
	next(p.w, p.r)
	if p.next != nil {
		go p.wait() // parked again: waits on a fresh stack
		return
	}
	p.finish()
}

// finish ends the exchange of an answered poll: the journal and the
// metrics, the answer on the connection, and the connection back to
// net/http when the client keeps it.
func (p *parked) finish() {
	defer p.end()
	p.env.finishServe(p.w, p.r, p.w.started)
	p.pk.End() // the poll is answered: it no longer counts as open
	cw := p.cw
	if cw.hijacked {
		return // a fault took the connection
	}
	h := cw.h
	closing := p.r.Close || hasCloseToken(h) || p.gone.Load() || p.env.Stop.Err() != nil || !cw.keepAlive()
	if closing && !hasCloseToken(h) {
		delete(h, "Connection")
		cw.closing = true
	}
	if p.parking.WriteTimeout > 0 {
		p.conn.SetWriteDeadline(time.Now().Add(p.parking.WriteTimeout))
	}
	if err := cw.send(true); err != nil {
		closing = true
	}
	if closing {
		p.conn.Close()
		p.cancel()
		return
	}
	p.stopping.Store(true)
	p.conn.SetReadDeadline(time.Unix(1, 0))
	<-p.reading
	p.cancel()
	if p.gone.Load() {
		p.conn.Close()
		return
	}
	p.conn.SetDeadline(time.Time{})
	var c net.Conn = p.conn
	if len(p.ahead) > 0 {
		c = &aheadConn{Conn: p.conn, ahead: p.ahead}
	}
	p.parking.giveBack(c)
}

func hasCloseToken(h http.Header) bool {
	for _, v := range h["Connection"] {
		if bytes.Contains(bytes.ToLower([]byte(v)), []byte("close")) {
			return true
		}
	}
	return false
}

// aheadConn is a connection given back with what the client had sent
// already, read first.
type aheadConn struct {
	net.Conn
	ahead []byte
}

func (c *aheadConn) Read(b []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(b, c.ahead)
		c.ahead = c.ahead[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// connWriter is the ResponseWriter of a parked poll served again: it keeps
// the answer and writes it on the connection as net/http would (the status
// line, the headers in net/http's order, the body), at once when flushed.
type connWriter struct {
	conn     net.Conn
	h        http.Header
	status   int
	wrote    bool
	body     []byte
	sentHead bool
	closing  bool // write Connection: close
	hijacked bool
}

func (c *connWriter) Header() http.Header { return c.h }

func (c *connWriter) WriteHeader(status int) {
	if c.wrote || status < 200 {
		return
	}
	c.wrote, c.status = true, status
}

func (c *connWriter) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	c.body = append(c.body, b...)
	return len(b), nil
}

// keepAlive reports whether the connection may serve another request
// after the answer: one whose end the client can tell.
func (c *connWriter) keepAlive() bool {
	return !c.sentHead || c.h.Get("Content-Length") != ""
}

// head is the status line and the headers. The answer's length is that
// of its body when it did not declare one and is sent whole.
func (c *connWriter) head(whole bool) []byte {
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	if whole && c.h.Get("Content-Length") == "" {
		c.h.Set("Content-Length", strconv.Itoa(len(c.body)))
	}
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 ")
	b.WriteString(strconv.Itoa(status))
	if text := http.StatusText(status); text != "" {
		b.WriteString(" " + text)
	} else {
		b.WriteString(" status code " + strconv.Itoa(status))
	}
	b.WriteString("\r\n")
	_ = c.h.Write(&b)
	if c.closing {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// send writes what is left of the answer; whole: all of it is written.
func (c *connWriter) send(whole bool) error {
	out := c.body
	if !c.sentHead {
		out = append(c.head(whole), c.body...)
		c.sentHead = true
	}
	c.body = nil
	if len(out) == 0 {
		return nil
	}
	_, err := c.conn.Write(out)
	return err
}

// FlushError sends what was written so far (a slow body's chunks). A
// body of no declared length then ends with the connection.
func (c *connWriter) FlushError() error {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if !c.sentHead && c.h.Get("Content-Length") == "" && !hasCloseToken(c.h) {
		delete(c.h, "Connection")
		c.closing = true
	}
	return c.send(false)
}

// Hijack gives the connection to a fault that breaks it.
func (c *connWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c.hijacked = true
	return c.conn, bufio.NewReadWriter(bufio.NewReader(c.conn), bufio.NewWriter(c.conn)), nil
}

// SetWriteDeadline bounds the writing of the answer.
func (c *connWriter) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }
