package edge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/metrics"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// faultClass is the path class of a request that passed a faultable door:
// the MCP endpoint, a file, or an operation of the API.
func faultClass(r *http.Request) string {
	switch {
	case HasPathPrefix(r.URL.Path, "/mcp"):
		return fault.MCP
	case strings.HasPrefix(r.URL.Path, wire.FilesPath):
		return fault.Files
	}
	return fault.API
}

// faultState is what the edge knows of the faults of one request.
type faultState struct {
	class string
	// header is the request's own fault (Mock-Fault), nil when none.
	header *fault.Hit
	// prefer is the answer the request's Prefer header asks for (Prism's
	// convention), nil when none: a fault of the admit stage.
	prefer *fault.Hit
	// modality is set once it is known (a file's media type, a
	// generation's modality).
	modality string
	// op is the operation an MCP tool call the request carries is of, set
	// when the call is admitted (before any head goes): the answer's
	// faults target it too.
	op string
	// decided: the answer's faults (latency, delivery) were drawn.
	decided bool
	// deliver is the delivery fault the answer meets; its bytes are held
	// until the handler is done, then sent broken.
	deliver *fault.Hit
	held    bytes.Buffer
	// mu guards what an MCP tool call, on a goroutine of its own, may
	// set while the request is answered: met and modality.
	mu sync.Mutex
	// met are the faults the request met, for the journal and the coverage.
	met []*fault.Hit
	// abort breaks the connection once the handler is done (a fault
	// decided by the front: an MCP stream dropped without resumption).
	abort atomic.Bool
	// holding: the answer met a fault when its head was written, so it is
	// held until the journal has it (finishFaults sends it).
	holding bool
	// evolve is the evolve hit the answer meets, nil when none; evolved
	// names what it added, for the journal.
	evolve  *fault.Hit
	evolved []string
	// off: the request meets no fault, neither its header's nor a
	// rule's (it is refused for what it touches: NoFaults).
	off bool
}

// held reports whether the answer is kept back: it met a fault before its
// head went out, or a delivery fault or an abort will break it.
func (w *Writer) held() bool {
	return w.faults.holding || w.faults.deliver != nil || w.faults.evolve != nil || w.faults.abort.Load()
}

// readFaultHeader reads the Mock-Fault header of a request to a faultable
// door. A server whose test controls are closed (a control token is set)
// ignores it, with a log line: strangers must not steer it. A malformed
// header, or one of a kind the request's class cannot meet, is the
// request's error.
func (env *Env) readFaultHeader(w *Writer, r *http.Request) error {
	values := r.Header.Values(fault.Header)
	if len(values) > 0 {
		if env.ControlToken != "" {
			env.Log.Warn("Mock-Fault header ignored: the server's test controls are closed by its control token",
				"request_id", w.Header().Get("X-Request-Id"), "path", r.URL.Path, "value", truncate(values[0], 200))
			return nil
		}
		spec, err := fault.ParseHeader(values, env.API)
		if err != nil {
			return err
		}
		if err := fault.Fits(spec.Kind, w.faults.class); err != nil {
			return err
		}
		w.faults.header = fault.FromHeader(spec, env.Eng.Seed(), w.Header().Get("X-Request-Id"))
	}
	return env.readPrefer(w, r)
}

// readPrefer reads Prism's Prefer header (and its query parameters,
// __code=404) where the Mock-Fault header is read (a server whose test
// controls are open), for the service's operations: code=404 and
// example=NAME are a status fault of the request
// (fault.ParsePrefer), met at its admission; dynamic=... alone asks for
// nothing (the simulation answers). A Mock-Fault header of the same stage
// and a Prefer that asks for an answer contradict each other.
func (env *Env) readPrefer(w *Writer, r *http.Request) error {
	if env.ControlToken != "" || w.faults.class != fault.API {
		return nil
	}
	values := r.Header.Values(fault.PreferHeader)
	if strings.Contains(r.URL.RawQuery, "__") { // Prism's query parameters: __code=404
		if q := fault.PreferQuery(r.URL.Query()); q != "" {
			values = append([]string{q}, values...) // the query's first, as Prism reads them
		}
	}
	if len(values) == 0 {
		return nil
	}
	spec, ok, err := fault.ParsePrefer(values, env.API)
	if err != nil || !ok {
		return err
	}
	if h := w.faults.header; h != nil && h.Stage() == fault.Admit {
		return sim.InvalidError([]sim.Violation{{In: "header", Field: fault.PreferHeader,
			Reason: "asks for an answer, and so does the Mock-Fault header: give one of them"}})
	}
	w.faults.prefer = fault.FromPrefer(spec)
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Abort breaks the connection once the handler is done, without a
// complete answer: a fault the front decided (one of the call stage that
// drops a stream, where no stream can be closed for it).
func (w *Writer) Abort() { w.faults.abort.Store(true) }

// met records a fault the request met, for the journal and the coverage.
func (w *Writer) met(h *fault.Hit) {
	if h != nil {
		w.faults.mu.Lock()
		w.faults.met = append(w.faults.met, h)
		w.faults.mu.Unlock()
	}
}

// faultWorkspace is the workspace whose faults a request meets: its
// principal's, else its file's.
func (w *Writer) faultWorkspace() uint64 {
	if p := w.out.Principal; p != nil {
		return p.WorkspaceID
	}
	if f := w.out.File; f != nil {
		return f.WS
	}
	return 0
}

// Faultable reports whether the request may meet a fault: its door lets
// faults in, and it asks for one or a rule is set somewhere.
func (w *Writer) Faultable() bool {
	return w.faults.class != "" && !w.faults.off && (w.faults.header != nil || w.faults.prefer != nil || w.env.Rules.Active())
}

// NoFaults takes the request out of every fault, its Mock-Fault header's
// and the rules': a front calls it when the request is not authorized for
// what it touches (another workspace's MCP session), so that it is refused
// exactly as without them.
func (w *Writer) NoFaults() {
	w.faults.off = true
	w.faults.header, w.faults.prefer = nil, nil
}

// Admission is the admit stage of a request (an operation's call, or a
// file's download): a fault whose kind forces the answer (Hit.Admit), or
// nil.
func (w *Writer) Admission(req fault.Request) *fault.Hit { return w.pick(fault.Admit, req) }

// SessionFault is the session stage of an MCP request, as it arrives
// (session: the request names one): a fault the MCP front applies
// (Hit.Session), or nil.
func (w *Writer) SessionFault(session bool) *fault.Hit {
	return w.pick(fault.Session, fault.Request{Session: session})
}

// CallFault is the call stage of an MCP tool call of op by workspace ws:
// a fault the MCP front applies to the call (Hit.Call), or nil.
func (w *Writer) CallFault(op string, ws uint64) *fault.Hit {
	return w.pick(fault.Call, fault.Request{Operation: op, Workspace: ws})
}

// pick decides whether the request meets a fault at point p: its own
// Mock-Fault header when that asks for one there (a one-request rule), else
// the rules of its workspace and the global ones. The hit is recorded as
// met.
func (w *Writer) pick(p fault.Stage, req fault.Request) *fault.Hit {
	if w.faults.class == "" || w.faults.off {
		return nil
	}
	req.Class = w.faults.class
	w.faults.mu.Lock()
	if req.Modality == "" {
		req.Modality = w.faults.modality
	} else if w.faults.modality == "" {
		w.faults.modality = req.Modality // the answer's faults target it too
	}
	if req.Operation != "" && w.faults.op == "" {
		w.faults.op = req.Operation // so does its operation
	}
	w.faults.mu.Unlock()
	ws := req.Workspace
	if ws == 0 {
		ws = w.faultWorkspace()
	}
	var h *fault.Hit
	if hd := w.faults.header; hd != nil && hd.Stage() == p {
		if hd.Strikes(req) {
			h = hd
		}
	} else if pf := w.faults.prefer; pf != nil && pf.Stage() == p {
		h = pf
	} else {
		h = w.env.Rules.Pick(ws, p, req)
	}
	w.met(h)
	return h
}

// Delay waits the latency a hit of the delay stage draws (nil: none),
// until ctx ends or the server begins to stop, and returns it: every
// injected latency is applied here.
func (env *Env) Delay(ctx context.Context, h *fault.Hit) time.Duration {
	if h == nil {
		return 0
	}
	d := h.Delay()
	ctx, cancel := env.UntilStop(ctx)
	env.Sleep(ctx, d)
	cancel()
	return d
}

// decideFaults draws the answer's latency and delivery faults, once, when
// the answer is about to go.
func (w *Writer) decideFaults() {
	st := &w.faults
	if st.decided || st.class == "" || st.off || (st.header == nil && !w.env.Rules.Active() && !w.env.Evolve) {
		return
	}
	st.decided = true
	req := fault.Request{Operation: w.out.Operation, Path: w.req.URL.Path, Ranged: w.req.Header.Get("Range") != ""}
	st.mu.Lock()
	if req.Operation == "" {
		req.Operation = st.op // an MCP tool call's
	}
	st.mu.Unlock()
	w.latency += w.env.Delay(w.req.Context(), w.pick(fault.Delay, req))
	// A GET of the MCP endpoint is a stream that may never end: it is never held.
	if st.class == fault.MCP && w.req.Method == http.MethodGet {
		return
	}
	// Only the answers of the service's operations evolve (not the
	// document, not a path that is none).
	if st.class == fault.API && w.out.Operation != "" {
		st.evolve = w.pick(fault.Shape, req)
		if st.evolve == nil && w.env.Evolve {
			st.evolve = fault.Standing(w.env.Eng.Seed(), w.Header().Get("X-Request-Id"))
			w.met(st.evolve)
		}
	}
	st.deliver = w.pick(fault.Deliver, req)
	st.mu.Lock()
	st.holding = len(st.met) > 0
	st.mu.Unlock()
}

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

// memory transport: a broken exchange is the error a client over TCP meets.
func (m *memResponse) Send(raw []byte) { m.sent = append(m.sent, raw...) }

func (m *memResponse) Break(reset bool) { m.broken, m.reset = true, reset }

func (m *memResponse) brokenResponse(r *http.Request) (*http.Response, error) {
	switch {
	case m.reset && len(m.sent) == 0:
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscallReset}
	case len(m.sent) == 0:
		return nil, io.EOF
	case !bytes.HasPrefix(m.sent, []byte("HTTP/")):
		return nil, fmt.Errorf("net/http: malformed HTTP response %q", truncate(string(m.sent), 40))
	}
	// A head was sent, then part of the body: the body ends early.
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(m.sent)), r)
	if err != nil {
		return nil, err
	}
	end := error(io.ErrUnexpectedEOF)
	if m.reset {
		end = &net.OpError{Op: "read", Net: "tcp", Err: syscallReset}
	}
	resp.Body = &brokenBody{r: resp.Body, err: end}
	return resp, nil
}

// brokenBody reads what was sent, then fails as a broken connection does.
type brokenBody struct {
	r   io.ReadCloser
	err error
}

func (b *brokenBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, b.err
	}
	return n, err
}

func (b *brokenBody) Close() error { return b.r.Close() }

// journal names the faults met, and their rules, for the journal entry.
// countHeaderFaults counts the faults a Mock-Fault header injected in m,
// and reports whether a status fault (of a rule or a header) forced the
// answer's status.
func (st *faultState) countHeaderFaults(m *metrics.Metrics) (forced bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, h := range st.met {
		if h.Rule == fault.HeaderRule || h.Rule == fault.PreferRule {
			m.HeaderFault(h.Kind)
		}
		forced = forced || h.Stage() == fault.Admit
	}
	return forced
}

func (st *faultState) journal() (kinds, rules string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.met) == 0 {
		return "", ""
	}
	k, r := make([]string, len(st.met)), make([]string, len(st.met))
	for i, h := range st.met {
		k[i], r[i] = h.Kind, h.Rule
	}
	return strings.Join(k, ","), strings.Join(r, ",")
}

// signFile is the query of a file's address while file URLs expire: when
// it expires (on the simulated clock, ttl_seconds from now) and a
// signature of that, so that a client cannot move it.
func (env *Env) signFile(ref sim.FileRef) string {
	h := env.Rules.Find(ref.WS, fault.Access, fault.Request{Class: fault.Files, Modality: fault.ModalityOf(mimeOfExt(ref.Ext))})
	if h == nil {
		return ""
	}
	at, ok := h.Expiry(env.Eng.Clock().Now())
	if !ok {
		return ""
	}
	expires := at.Unix()
	return "?expires=" + strconv.FormatInt(expires, 10) + "&signature=" + env.fileSignature(ref, expires)
}

// fileSignature is an HMAC of the address and its expiry, keyed by the
// engine's signing key (random, or from --file-secret; never the seed).
func (env *Env) fileSignature(ref sim.FileRef, expires int64) string {
	m := hmac.New(sha256.New, env.Eng.FileSignKey())
	m.Write([]byte("file-expiry/" + ref.Path() + "?" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// mimeOfExt is the media type of a file extension, for the modality of a
// file address.
func mimeOfExt(ext string) string {
	switch ext {
	case ".png", ".jpg", ".jpeg", ".webp", ".gif":
		return "image/"
	case ".mp4", ".webm", ".mov":
		return "video/"
	case ".mp3", ".wav", ".ogg", ".m4a":
		return "audio/"
	case ".glb", ".gltf", ".obj":
		return "model/"
	}
	return ""
}

// FileAccess is the access stage of a file's download: the access-stage
// rule of its scope (or its own Mock-Fault header). The error to answer
// with, if the rule's kind refuses the file (an expired address); the rule
// counts every download it targets, and those it struck; a struck one is
// met.
func (w *Writer) FileAccess(ref sim.FileRef, made time.Time) error {
	var h *fault.Hit
	if hd := w.faults.header; hd != nil && hd.Stage() == fault.Access {
		h = hd
	} else {
		h = w.env.Rules.Find(ref.WS, fault.Access, fault.Request{Class: fault.Files, Modality: w.faults.modality})
	}
	if h == nil {
		return nil
	}
	struck, err := h.Access(fileRequest{w: w, ref: ref, made: made})
	if h.Rule != fault.HeaderRule {
		w.env.Rules.Count(ref.WS, h.Rule, struck)
	}
	if struck {
		w.met(h)
	}
	return err
}

// fileRequest is a file request, as a kind of the access stage judges it.
type fileRequest struct {
	w    *Writer
	ref  sim.FileRef
	made time.Time
}

func (f fileRequest) Now() time.Time  { return f.w.env.Eng.Clock().Now() }
func (f fileRequest) Made() time.Time { return f.made }

// Expiry is the expiry the address carries, held by its signature.
func (f fileRequest) Expiry() (at time.Time, carried, valid bool) {
	q := f.w.req.URL.Query()
	e := q.Get("expires")
	if e == "" {
		return time.Time{}, false, false
	}
	n, err := strconv.ParseInt(e, 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("signature")), []byte(f.w.env.fileSignature(f.ref, n))) {
		return time.Time{}, true, false
	}
	return time.Unix(n, 0), true, true
}

// exchange is what the coverage of failure paths reads of the request.
func (w *Writer) exchange() journal.Exchange {
	r := w.req
	x := journal.Exchange{Workspace: w.faultWorkspace(), Method: r.Method, Path: r.URL.Path, Operation: w.out.Operation, MCPMethod: w.out.MCPMethod,
		Ranged: r.Header.Get("Range") != "", Resuming: r.Header.Get("Last-Event-ID") != ""}
	if c := w.out.Call; c != nil {
		x.Operation = c.Operation
	}
	x.Background = w.faults.class == fault.MCP && r.Method == http.MethodGet && !x.Resuming
	return x
}
