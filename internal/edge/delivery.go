package edge

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// evolveHeld applies the shape hit the answer met (evolve) to the held
// answer: its body (and the journal's copy of it) and its headers. The
// simulation's state never sees it.
func (w *Writer) evolveHeld() {
	if h := w.faults.evolve; h != nil {
		w.faults.evolved = h.Shape(heldAnswer{w})
	}
}

// heldAnswer is the answer held back, as a kind of the shape or deliver
// stage reads and changes it.
type heldAnswer struct{ w *Writer }

func (a heldAnswer) Status() int         { return a.w.status }
func (a heldAnswer) Header() http.Header { return a.w.Header() }
func (a heldAnswer) Body() []byte        { return a.w.faults.held.Bytes() }

func (a heldAnswer) SetBody(body []byte) {
	st := &a.w.faults
	st.held.Reset()
	st.held.Write(body)
	a.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if a.w.resCapture != nil {
		a.w.resCapture.Replace(body)
	}
}

// finishFaults sends an answer held for a delivery fault, broken as the
// fault's kind breaks it; a front's abort closes the connection with no
// answer.
func (w *Writer) finishFaults() {
	st := &w.faults
	abort := st.abort.Load() && st.deliver == nil
	if abort {
		st.held.Reset()
	}
	h := st.deliver
	if h == nil && !abort {
		if st.holding && w.wroteHeader {
			w.ResponseWriter.WriteHeader(w.status)
			w.ResponseWriter.Write(st.held.Bytes())
		}
		return
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	head := w.Header()
	head.Set("Content-Length", strconv.Itoa(st.held.Len()))
	head.Del("Transfer-Encoding")
	d := &delivery{heldAnswer: heldAnswer{w}, status: status}
	defer d.end()
	if abort {
		d.Close()
		return
	}
	h.Deliver(d)
}

// delivery is the held answer and its connection, as a kind of the
// deliver stage breaks them: the connection is taken from net/http (or
// the in-memory transport's Breaker) at the first raw byte or end.
type delivery struct {
	heldAnswer
	status  int
	breaker Breaker
	conn    net.Conn
	buf     *bufio.ReadWriter
	taken   bool
	ended   bool
}

func (d *delivery) Status() int { return d.status }

// take takes the connection, once; one that cannot be taken (HTTP/2) is
// aborted, which resets its stream.
func (d *delivery) take() {
	if d.taken {
		return
	}
	d.taken = true
	if b, ok := unwrapBreaker(d.w.ResponseWriter); ok {
		d.breaker = b
		return
	}
	conn, buf, err := http.NewResponseController(d.w.ResponseWriter).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	d.conn, d.buf = conn, buf
}

func (d *delivery) Cut(n int64) {
	body := d.Body()
	d.Header().Set("Connection", "close")
	d.Send(append(rawHead(d.status, d.Header()), body[:min(max(n, 0), int64(len(body)))]...))
}

func (d *delivery) Send(raw []byte) {
	d.take()
	d.w.sentBytes += int64(len(raw))
	if d.breaker != nil {
		d.breaker.Send(raw)
		return
	}
	if len(raw) > 0 {
		_, _ = d.buf.Write(raw)
		_ = d.buf.Flush()
	}
}

func (d *delivery) Trickle(bytesPerSecond int64) {
	d.ended = true // the answer goes whole, on the connection net/http keeps
	d.w.slowBody(d.status, d.Body(), bytesPerSecond)
}

func (d *delivery) Close() { d.finish(false) }
func (d *delivery) Reset() { d.finish(true) }

// finish ends the connection: reset sends a TCP RST, a close a FIN.
func (d *delivery) finish(reset bool) {
	if d.ended {
		return
	}
	d.take()
	d.ended = true
	if d.breaker != nil {
		d.breaker.Break(reset)
		return
	}
	defer d.conn.Close()
	if reset {
		raw := d.conn
		if tc, ok := raw.(*tls.Conn); ok {
			// Over https the reset cuts the TCP connection under TLS,
			// with no close_notify before it.
			raw = tc.NetConn()
		}
		if tcp, ok := raw.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
			_ = tcp.Close()
		}
	}
}

// end closes a connection a kind took and left open.
func (d *delivery) end() {
	if d.taken && !d.ended {
		d.Close()
	}
}

// slowBody sends the answer at bytesPerSecond, in chunks ten times a second.
func (w *Writer) slowBody(status int, body []byte, bytesPerSecond int64) {
	w.ResponseWriter.WriteHeader(status)
	chunk := max(1, bytesPerSecond/10)
	rc := http.NewResponseController(w.ResponseWriter)
	ctx, cancel := w.env.UntilStop(w.req.Context())
	defer cancel()
	for len(body) > 0 && ctx.Err() == nil {
		n := min(int64(len(body)), chunk)
		if _, err := w.ResponseWriter.Write(body[:n]); err != nil {
			return
		}
		w.sentBytes += n
		body = body[n:]
		_ = rc.Flush()
		if len(body) > 0 {
			w.env.Sleep(ctx, time.Duration(n)*time.Second/time.Duration(bytesPerSecond))
		}
	}
}

// rawHead is an HTTP/1.1 status line and header block.
func rawHead(status int, h http.Header) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", status, http.StatusText(status))
	_ = h.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// Breaker is a ResponseWriter that breaks its exchange by itself, without
// a connection to hijack (the in-memory transport): Send is what reaches
// the client, Break how the connection ends (reset, or closed).
type Breaker interface {
	Send(raw []byte)
	Break(reset bool)
}

func unwrapBreaker(rw http.ResponseWriter) (Breaker, bool) {
	for {
		if b, ok := rw.(Breaker); ok {
			return b, true
		}
		u, ok := rw.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil, false
		}
		rw = u.Unwrap()
	}
}
