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

	"github.com/mediamock/mediamock/internal/evolve"
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
	if len(values) == 0 {
		return nil
	}
	if env.ControlToken != "" {
		env.Log.Warn("Mock-Fault header ignored: the server's test controls are closed by its control token",
			"request_id", w.Header().Get("X-Request-Id"), "path", r.URL.Path, "value", truncate(values[0], 200))
		return nil
	}
	spec, err := fault.ParseHeader(values, env.API.Has)
	if err != nil {
		return err
	}
	if err := fault.Fits(spec.Kind, w.faults.class); err != nil {
		return err
	}
	w.faults.header = fault.FromHeader(spec, env.Eng.Seed(), w.Header().Get("X-Request-Id"))
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Abort breaks the connection once the handler is done, without a
// complete answer: a fault the front decided (the call stage's
// mcp_stream_drop, where no stream can be closed for it).
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
	return w.faults.class != "" && !w.faults.off && (w.faults.header != nil || w.env.Rules.Active())
}

// NoFaults takes the request out of every fault, its Mock-Fault header's
// and the rules': a front calls it when the request is not authorized for
// what it touches (another workspace's MCP session), so that it is refused
// exactly as without them.
func (w *Writer) NoFaults() {
	w.faults.off = true
	w.faults.header = nil
}

// Admission is the admit stage of a request (an operation's call, or a
// file's download): a status fault that answers instead, or nil.
func (w *Writer) Admission(req fault.Request) *fault.Hit { return w.pick(fault.Admit, req) }

// SessionFault is the session stage of an MCP request, as it arrives:
// the server unavailable, or its session ended (session: the request
// names one).
func (w *Writer) SessionFault(session bool) *fault.Hit {
	return w.pick(fault.Session, fault.Request{Session: session})
}

// CallFault is the call stage of an MCP tool call of op by workspace ws:
// its stream dropped before its result.
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
	if hd := w.faults.header; hd != nil && fault.Point(hd.Kind) == p {
		if hd.Strikes(req) {
			h = hd
		}
	} else {
		h = w.env.Rules.Pick(ws, p, req)
	}
	w.met(h)
	return h
}

// Delay waits the latency a hit of kind latency draws (nil: none), until
// ctx ends or the server begins to stop, and returns it: every injected
// latency is applied here.
func (env *Env) Delay(ctx context.Context, h *fault.Hit) time.Duration {
	if h == nil {
		return 0
	}
	d := h.LatencyOf()
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

// evolveHeld applies the evolve hit the answer met to the held answer:
// its JSON body (and the journal's copy of it) and its headers. The
// simulation's state never sees it.
func (w *Writer) evolveHeld() {
	st := &w.faults
	h := st.evolve
	if h == nil {
		return
	}
	o := evolve.Options{Fields: fault.Evolves(h.Fields), Enums: fault.Evolves(h.Enums),
		Headers: fault.Evolves(h.Headers), Reorder: fault.Evolves(h.Reorder)}
	head, rng := w.Header(), h.Draws()
	if mt, _, _ := strings.Cut(head.Get("Content-Type"), ";"); mt == "application/json" && st.held.Len() > 0 {
		body, added := evolve.Body(st.held.Bytes(), w.status, o, rng)
		st.held.Reset()
		st.held.Write(body)
		head.Set("Content-Length", strconv.Itoa(len(body)))
		if w.resCapture != nil {
			w.resCapture.Replace(body)
		}
		st.evolved = added
	}
	st.evolved = append(st.evolved, evolve.Headers(head, o, rng)...)
}

// finishFaults sends an answer held for a delivery fault, broken as the
// fault says; a front's abort breaks the connection.
func (w *Writer) finishFaults() {
	st := &w.faults
	if st.abort.Load() && st.deliver == nil {
		st.deliver = &fault.Hit{Spec: fault.Spec{Kind: fault.EmptyReply}}
		st.held.Reset()
	}
	h := st.deliver
	if h == nil {
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
	body := st.held.Bytes()
	head := w.Header()
	head.Set("Content-Length", strconv.Itoa(len(body)))
	head.Del("Transfer-Encoding")
	if h.Kind == fault.SlowBody {
		w.slowBody(status, body, h.BytesPerSecond)
		return
	}
	var sent []byte
	switch h.Kind {
	case fault.Truncate, fault.FileTruncate, fault.Reset:
		cut := h.Cut(int64(len(body)))
		if h.Kind != fault.Reset || cut > 0 {
			head.Set("Connection", "close")
			sent = append(rawHead(status, head), body[:cut]...)
		}
	case fault.Garbage:
		sent = h.GarbageBytes()
	}
	w.sentBytes = int64(len(sent))
	breakConnection(w.ResponseWriter, h.Kind, status, head, sent)
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
// a connection to hijack (the in-memory transport).
type Breaker interface {
	Break(kind string, status int, h http.Header, sent []byte)
}

// breakConnection takes the connection from net/http, writes sent and ends
// it: reset sends a TCP RST, every other kind closes it. A connection that
// cannot be taken (HTTP/2) is aborted, which resets its stream.
func breakConnection(rw http.ResponseWriter, kind string, status int, h http.Header, sent []byte) {
	if b, ok := unwrapBreaker(rw); ok {
		b.Break(kind, status, h, sent)
		return
	}
	conn, buf, err := http.NewResponseController(rw).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	if len(sent) > 0 {
		_, _ = buf.Write(sent)
		_ = buf.Flush()
	}
	if kind == fault.Reset {
		raw := conn
		if tc, ok := conn.(*tls.Conn); ok {
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
func (m *memResponse) Break(kind string, status int, h http.Header, sent []byte) {
	m.broken, m.sent = kind, sent
}

func (m *memResponse) brokenResponse(r *http.Request) (*http.Response, error) {
	switch m.broken {
	case fault.Reset:
		if len(m.sent) == 0 {
			return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscallReset}
		}
	case fault.EmptyReply:
		return nil, io.EOF
	case fault.Garbage:
		return nil, fmt.Errorf("net/http: malformed HTTP response %q", truncate(string(m.sent), 40))
	}
	// A head was sent, then part of the body: the body ends early.
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(m.sent)), r)
	if err != nil {
		return nil, err
	}
	end := error(io.ErrUnexpectedEOF)
	if m.broken == fault.Reset {
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
		if h.Rule == "header" {
			m.HeaderFault(h.Kind)
		}
		forced = forced || h.Kind == fault.Status
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
	h := env.Rules.Find(ref.WS, fault.FileExpiry, fault.Request{Class: fault.Files, Modality: fault.ModalityOf(mimeOfExt(ref.Ext))})
	if h == nil {
		return ""
	}
	expires := env.Eng.Clock().Now().Unix() + *h.TTLSeconds
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

// FileAccess is the access stage of a file's download: the file_expiry
// fault of its scope (or its own Mock-Fault header). An address that
// carries an expiry expires then, if its signature holds; one without
// expires ttl_seconds after the file was made. An expired address is the
// error to answer with, and the fault is met.
func (w *Writer) FileAccess(ref sim.FileRef, made time.Time) error {
	var h *fault.Hit
	if hd := w.faults.header; hd != nil && hd.Kind == fault.FileExpiry {
		h = hd
	} else {
		h = w.env.Rules.Find(ref.WS, fault.FileExpiry, fault.Request{Class: fault.Files, Modality: w.faults.modality})
	}
	if h == nil {
		return nil
	}
	// The rule counts every download it targets, and those it struck.
	met := func(struck bool) {
		if h.Rule != "header" {
			w.env.Rules.Count(ref.WS, h.Rule, struck)
		}
		if struck {
			w.met(h)
		}
	}
	now := w.env.Eng.Clock().Now()
	expires := made.Add(time.Duration(*h.TTLSeconds) * time.Second)
	q := w.req.URL.Query()
	if e := q.Get("expires"); e != "" {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil || !hmac.Equal([]byte(q.Get("signature")), []byte(w.env.fileSignature(ref, n))) {
			met(true)
			return &sim.Error{Kind: sim.EFORBIDDEN, Code: "invalid_signature",
				Message: "The file address's expiry or signature was changed; read the asset again for a fresh address."}
		}
		expires = time.Unix(n, 0)
	}
	if !now.After(expires) {
		met(false)
		return nil
	}
	met(true)
	if h.ExpiredStatusOr() == http.StatusNotFound {
		return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No such file."}
	}
	return &sim.Error{Kind: sim.EFORBIDDEN, Code: "file_url_expired",
		Message: "This file address expired at " + sim.FormatTime(expires) + "; read the asset again for a fresh address.",
		Details: map[string]any{"expired_at": sim.FormatTime(expires)}}
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
