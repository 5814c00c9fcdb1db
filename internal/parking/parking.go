// Package parking takes the connections of waiting long polls off
// net/http. A request that waits is served by a goroutine of net/http's at
// the bottom of a deep stack, with the connection's buffers and a second
// goroutine that watches for the client hanging up: tens of kilobytes
// each. A parked poll gives its connection up (net/http's hijacking) and
// its goroutine returns; the poll waits on one goroutine of its own at a
// shallow stack (Conn.Sleep), which watches the connection for the client
// hanging up while it waits, holding the request and the connection only;
// whatever the poll waits for wakes it (Conn.Wake), and it is served again
// on that goroutine. Its answer is written as net/http writes it, and a
// connection the client keeps goes back to net/http through the listener.
//
// The Listener is the listener http.Server serves: the connections it
// accepts and those given back. A request is parked with Detach, which
// says when it cannot be (TLS, HTTP/2, another server's request, a writer
// that cannot be hijacked): such a poll waits where it is, on its own
// goroutine, which is the plain fallback (internal/edge: Writer.Park).
// BenchmarkLongPollMemory weighs the two.
package parking

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Listener serves the connections a listener accepts and those parked
// polls give back.
type Listener struct {
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

	mu    sync.Mutex
	open  int            // polls parked or being parked
	none  chan struct{}  // closed when open falls to 0
	conns map[*Conn]bool // the parked polls, for WakeAll
}

// add counts a poll being parked; release, one that ended.
func (l *Listener) add() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == 0 {
		l.none = make(chan struct{})
	}
	l.open++
}

func (l *Listener) release(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c != nil {
		delete(l.conns, c)
	}
	if l.open--; l.open == 0 {
		close(l.none)
	}
}

// WakeAll wakes every parked poll (Conn.Wake): the server is stopping, and
// each answers with what it has. A poll parked after it is the caller's
// to wake.
func (l *Listener) WakeAll() {
	l.mu.Lock()
	conns := make([]*Conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.Wake()
	}
}

type accepted struct {
	c   net.Conn
	err error
}

// New serves ln's connections to srv, and the connections parked polls
// give back.
func New(ln net.Listener, srv *http.Server) *Listener {
	l := &Listener{Listener: ln, WriteTimeout: srv.WriteTimeout, Server: srv, accepted: make(chan accepted), back: make(chan net.Conn),
		done: make(chan struct{}), dead: make(chan struct{})}
	go l.accept()
	return l
}

func (l *Listener) accept() {
	defer close(l.dead)
	for {
		c, err := l.Listener.Accept()
		select {
		case l.accepted <- accepted{c, err}:
		case <-l.done:
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
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case a := <-l.accepted:
		return a.c, a.err
	case c := <-l.back:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections given back after are closed.
func (l *Listener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Parked is how many long polls are parked now.
func (l *Listener) Parked() int { return int(l.parked.Load()) }

// Wait waits until every parked poll has been answered, or ctx ends.
func (l *Listener) Wait(ctx context.Context) error {
	l.mu.Lock()
	if l.open == 0 {
		l.mu.Unlock()
		return nil
	}
	none := l.none
	l.mu.Unlock()
	select {
	case <-none:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveBack hands a connection whose exchange ended back to net/http.
func (l *Listener) giveBack(c net.Conn) {
	select {
	case l.back <- c:
	case <-l.done:
		c.Close()
	case <-l.dead: // the server stopped serving
		c.Close()
	}
}

// Parkable reports whether a request may be parked: served by this
// listener's server, over HTTP/1.1 without TLS, by a writer that can be
// hijacked.
func (l *Listener) Parkable(rw http.ResponseWriter, r *http.Request) bool {
	if r.TLS != nil || r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return false
	}
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != l.Server {
		return false
	}
	_, ok := rw.(http.Hijacker)
	return ok
}

// Conn is a parked poll's connection, taken from net/http.
type Conn struct {
	l      *Listener
	conn   net.Conn
	w      *connWriter
	r      *http.Request // as served again: its context ends when the client goes
	cancel context.CancelFunc
	ahead  []byte // what the client sent after the request
	ended  atomic.Bool
	wake   chan struct{} // a Wake not yet slept through (one is enough)

	mu       sync.Mutex
	sleeping bool // Sleep is reading the connection: a Wake interrupts the read
	gone     bool // the client hung up
	read     bool // the client sent a byte: the connection is no longer read
	one      [1]byte
}

// Detach takes a request's connection from net/http, or says it cannot
// (false: the request waits where it is). The request's headers so far
// (those of rw) are the answer's; ctx is the context it goes on with (its
// values; it is not ended by net/http any more, but when the client hangs
// up). Once detached, the poll waits on a goroutine of the caller's
// (Sleep, until Wake or the client hangs up), is served again with Writer
// and Request on it, and ends with Finish (or Close).
func (l *Listener) Detach(rw http.ResponseWriter, r *http.Request, ctx context.Context) (*Conn, bool) {
	if r.TLS != nil || r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return nil, false
	}
	h := rw.Header()
	// Counted before net/http lets the connection go: a shutdown waits
	// for one or the other.
	l.add()
	conn, buf, err := http.NewResponseController(rw).Hijack()
	if err != nil {
		l.release(nil)
		return nil, false
	}
	c := &Conn{l: l, conn: conn, w: &connWriter{conn: conn, h: h}, wake: make(chan struct{}, 1)}
	if n := buf.Reader.Buffered(); n > 0 {
		ahead, _ := buf.Reader.Peek(n)
		c.ahead = bytes.Clone(ahead)
		c.read = true // the client's next request is here: nothing to watch
	}
	ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	c.r = r.WithContext(ctx)
	l.parked.Add(1)
	l.mu.Lock()
	if l.conns == nil {
		l.conns = map[*Conn]bool{}
	}
	l.conns[c] = true
	l.mu.Unlock()
	return c, true
}

// Writer is the parked poll's ResponseWriter: it keeps the answer and
// writes it on the connection as net/http would, at Finish (at once when
// flushed).
func (c *Conn) Writer() http.ResponseWriter { return c.w }

// Request is the parked request, with a context that ends when the client
// hangs up.
func (c *Conn) Request() *http.Request { return c.r }

// end takes an answered (or abandoned) poll out of the parked ones.
func (c *Conn) end() {
	if c.ended.CompareAndSwap(false, true) {
		c.l.parked.Add(-1)
		c.l.release(c)
	}
}

// Close abandons a parked poll: its connection closes unanswered.
func (c *Conn) Close() {
	c.conn.Close()
	c.cancel()
	c.end()
}

// Sleep blocks the goroutine of a parked poll until Wake, or until the
// client hangs up (the request's context then ends). Meanwhile it reads
// from the connection, as net/http does while a handler runs, to see the
// hang-up: a byte that comes is the client's next request, kept for when
// the connection goes back, and from then on Sleep only waits for Wake.
// A Wake that came before Sleep ends it at once.
func (c *Conn) Sleep() {
	for {
		c.mu.Lock()
		select {
		case <-c.wake:
			c.mu.Unlock()
			return
		default:
		}
		if c.read || c.gone {
			c.mu.Unlock()
			<-c.wake
			return
		}
		c.sleeping = true
		c.mu.Unlock()
		n, err := c.conn.Read(c.one[:])
		c.mu.Lock()
		c.sleeping = false
		c.mu.Unlock()
		// Only Wake sets a deadline, and only while Sleep reads.
		c.conn.SetReadDeadline(time.Time{})
		var timeout interface{ Timeout() bool }
		switch {
		case n == 1:
			c.ahead = append(c.ahead, c.one[0])
			c.read = true
		case err != nil && errors.As(err, &timeout) && timeout.Timeout():
			// woken: the next turn takes the wake
		case err != nil:
			c.mu.Lock()
			c.gone = true
			c.mu.Unlock()
			c.cancel()
			return
		}
	}
}

// Wake ends the parked poll's Sleep, or its next one: the poll has
// something to look at. It may be called from any goroutine, more than
// once, and does not block.
func (c *Conn) Wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	if c.sleeping {
		c.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// Finish sends an answered poll's answer, and gives the connection back to
// net/http when the client keeps it; stopping: the server is shutting
// down, the connection closes.
func (c *Conn) Finish(stopping bool) {
	defer c.end()
	cw := c.w
	if cw.hijacked {
		return // a fault took the connection
	}
	h := cw.h
	c.mu.Lock()
	gone := c.gone
	c.mu.Unlock()
	closing := c.r.Close || hasCloseToken(h) || gone || stopping || !cw.keepAlive()
	if closing && !hasCloseToken(h) {
		delete(h, "Connection")
		cw.closing = true
	}
	if c.l.WriteTimeout > 0 {
		c.conn.SetWriteDeadline(time.Now().Add(c.l.WriteTimeout))
	}
	if err := cw.send(true); err != nil {
		closing = true
	}
	if closing {
		c.conn.Close()
		c.cancel()
		return
	}
	c.cancel()
	c.conn.SetDeadline(time.Time{})
	var conn net.Conn = c.conn
	if len(c.ahead) > 0 {
		conn = &aheadConn{Conn: c.conn, ahead: c.ahead}
	}
	c.l.giveBack(conn)
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
