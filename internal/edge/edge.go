package edge

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Door is how a front's requests enter the edge.
type Door struct {
	// Front names the front in the journal and the coverage: rest, mcp, control.
	Front string
	// Journaled records the front's requests in the journal.
	Journaled bool
	// BodyLimit, when set, gives the cap of a request's body and the error
	// of a body over it, applied before the front; a front that must know
	// whom it serves first (REST: authentication before the size) calls
	// LimitBody itself.
	BodyLimit func(*http.Request) (int64, error)
	// Faults lets the requests meet injected faults (rules and the
	// Mock-Fault header): the API, the files and MCP.
	Faults bool
}

// Serve passes a request through the edge: a request id, a Date from the
// simulated clock, panic recovery, the body cap when the door has one, then
// next; afterwards it records the exchange in the journal. The operations a
// request carries are checked and counted by their pipeline (ops.Invoke).
func (env *Env) Serve(w http.ResponseWriter, r *http.Request, d Door, next func(*Writer, *http.Request)) {
	started := env.WallClock()
	rw := &Writer{ResponseWriter: w, env: env, door: d, req: r, started: started}
	h := rw.Header()
	wire.SetHeader(h, "X-Request-Id", env.NewRequestID())
	// The Date agrees with X-RateLimit-Reset, Retry-After and every
	// timestamp in bodies, whatever the clock mode.
	h["Date"] = []string{httpDate(env.Eng.Clock().Now())}
	if env.Journal != nil && d.Journaled {
		rw.reqCapture, rw.resCapture = journal.NewCapture(env.Journal.BodyCap()), journal.NewCapture(env.Journal.BodyCap())
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			env.Log.Error("panic serving request", "request_id", rw.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !rw.wroteHeader {
				WriteError(rw, &sim.Error{Kind: sim.EINTERNAL, Code: "internal_error", Message: "Internal server error."})
			}
		}
		if rw.park != nil && !rw.park.inline {
			return // a parked long poll: its waiter finishes the exchange
		}
		env.finishServe(rw, r, started)
	}()
	if d.Faults {
		rw.faults.class = faultClass(r)
		if err := env.readFaultHeader(rw, r); err != nil {
			WriteError(rw, err)
			return
		}
	}
	if d.BodyLimit != nil {
		if max, tooBig := d.BodyLimit(r); !LimitBody(rw, r, max, tooBig) {
			return
		}
	}
	next(rw, r)
}

// finishServe ends an exchange once the front has answered: it logs an
// internal error, evolves a held answer, records the exchange in the
// journal and the metrics, and sends an answer held for a fault.
func (env *Env) finishServe(rw *Writer, r *http.Request, started time.Time) {
	rw.logInternal(r)
	rw.evolveHeld()
	env.record(rw, r, started)
	// An answer that met a fault goes out once the journal and the
	// coverage know of it: the client's next step comes after.
	rw.finishFaults()
}

// lastDate is the Date header of the last second asked for: a server under
// load answers many requests in one second of its clock.
var lastDate atomic.Pointer[dateOf]

type dateOf struct {
	unix int64
	text string
}

// httpDate is t as a Date header (RFC 9110's IMF-fixdate).
func httpDate(t time.Time) string {
	sec := t.Unix()
	if d := lastDate.Load(); d != nil && d.unix == sec {
		return d.text
	}
	d := &dateOf{unix: sec, text: t.UTC().Format(http.TimeFormat)}
	lastDate.Store(d)
	return d.text
}

// LimitBody caps the request's body at max bytes: a declared length over it
// is answered with tooBig at once, without reading the body (false); a body
// without a length is cut off at the cap while it is read.
func LimitBody(w *Writer, r *http.Request, max int64, tooBig error) bool {
	if r.ContentLength > max {
		w.Header().Set("Connection", "close")
		WriteError(w, tooBig)
		return false
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &closeOnError{ReadCloser: http.MaxBytesReader(w, r.Body, max), w: w}
		if w.reqCapture != nil {
			r.Body = &journal.CaptureBody{ReadCloser: r.Body, C: w.reqCapture}
		}
	}
	return true
}

// closeOnError ends the connection after the answer when the body could
// not be read (too large, or too slow for the read timeout): what is left
// of it must not be taken for the next request.
type closeOnError struct {
	io.ReadCloser
	w *Writer
}

func (b *closeOnError) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !b.w.wroteHeader {
		b.w.Header().Set("Connection", "close")
	}
	return n, err
}

// NewRequestID is the next request id, as the X-Request-Id header shows it:
// req_000000000042.
func (env *Env) NewRequestID() string { return requestID(env.reqSeq.Add(1)) }

func requestID(n uint64) string {
	var buf [32]byte
	b := append(buf[:0], "req_000000000000"...)
	digits := strconv.AppendUint(buf[len(b):len(b)], n, 10)
	if len(digits) >= 12 {
		return "req_" + string(digits)
	}
	return string(append(b[:len(b)-len(digits)], digits...))
}

// Writer is the ResponseWriter of a request that passed the edge. Besides
// writing the answer, a front hands it the request's outcome (Hand), and
// the fault stages it meets ask it (Admission, SessionFault, CallFault,
// FileAccess).
type Writer struct {
	http.ResponseWriter
	env         *Env
	door        Door
	out         Outcome // what the front handed over
	errCode     string  // the error code the answer was written with (WriteError), or the outcome's
	status      int
	wroteHeader bool
	internal    error
	latency     time.Duration
	reqCapture  *journal.Capture // the journal's copy of the bodies
	resCapture  *journal.Capture
	req         *http.Request
	faults      faultState
	sentBytes   int64     // what a broken answer sent
	started     time.Time // when the edge took the request, on the wall clock
	park        *parked   // set while a long poll's wait is parked
}

// Outcome is what a front tells the edge of the request it answers: who
// made it, which operation it was and how that answered, the MCP message
// it carried and the operation a tool call in it was, the file it was for.
// The journal, the metrics, the coverage of failure paths and the faults
// of the answer read it.
type Outcome struct {
	// Principal is who the request authenticated as; nil when it did not.
	Principal *sim.Principal
	// Operation is the operation of openapi.json or control.json the
	// request was, ErrorCode its error object's code ("" for a success).
	Operation, ErrorCode string
	// Outside says why the answer is outside the contract (a fault that
	// rehearses drift forced it); "" for any other.
	Outside string
	// MCPMethod is the JSON-RPC method of an MCP message (a batch's,
	// joined by commas).
	MCPMethod string
	// Call is the call of an operation the request carried inside its
	// protocol (an MCP tool call).
	Call *Call
	// File is the file the request was for: its workspace (the journal's,
	// and the scope whose faults it meets) and its modality (which faults
	// target).
	File *sim.FileRef
}

// Call is the call of an operation a request carried inside another
// protocol (an MCP tool call), as the journal records it: the entry names
// the operation, with the status and error code the operation answered.
type Call struct {
	Operation string
	// Status is what the operation answered, as REST would have: 201, 403, 429.
	Status    int
	ErrorCode string
	// Outside says why the operation's answer is outside the contract.
	Outside string
}

// Hand gives the edge the request's outcome, whole, once the front knows
// it and before the answer's head goes: the coverage and the answer's
// faults read it then. A front whose outcome grows while it answers (an
// MCP request, whose tool calls may end after its head went) hands it
// again, whole, when it knows more; the journal and the metrics read the
// last.
func (w *Writer) Hand(o Outcome) {
	w.out, w.errCode = o, o.ErrorCode
	if f := o.File; f != nil {
		w.faults.mu.Lock()
		w.faults.modality = fault.ModalityOf(mimeOfExt(f.Ext))
		w.faults.mu.Unlock()
	}
}

// WriteHeader sends the status.
func (w *Writer) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader, w.status = true, status
	if w.faults.class != "" && w.env.Coverage.Waiting() {
		w.env.Coverage.Next(w.exchange())
	}
	w.decideFaults()
	if w.held() {
		return // finishFaults sends it, after the journal
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write sends body bytes, keeping the journal's copy.
func (w *Writer) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.resCapture != nil {
		w.resCapture.Keep(b)
	}
	if w.held() {
		return w.faults.held.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// FlushError sends what was written so far, unless the answer is held for
// a delivery fault.
func (w *Writer) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.held() {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logInternal logs the internal error the request was answered with.
func (w *Writer) logInternal(r *http.Request) {
	if w.internal != nil {
		w.env.Log.Error("internal error", "request_id", w.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "err", w.internal)
	}
}

func (w *Writer) releaseCaptures() {
	if w.reqCapture != nil {
		w.reqCapture.Release()
		w.resCapture.Release()
		w.reqCapture, w.resCapture = nil, nil
	}
}

// record adds a finished request to the journal.
func (env *Env) record(w *Writer, r *http.Request, started time.Time) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if env.Log.Handler().Enabled(context.Background(), slog.LevelInfo) {
		var ws uint64
		if p := w.out.Principal; p != nil {
			ws = p.WorkspaceID
		}
		env.logRequest(r.Method, r.URL.Path, status, ws, started, w.Header().Get("X-Request-Id"))
	}
	if env.Metrics != nil {
		op, st := w.out.Operation, status
		if c := w.out.Call; c != nil {
			op, st = c.Operation, c.Status
		}
		env.Metrics.Count(w.door.Front, op, st, w.faults.countHeaderFaults(env.Metrics))
	}
	if env.Journal == nil || !w.door.Journaled {
		w.releaseCaptures()
		return
	}
	e := journal.Entry{
		ID: w.Header().Get("X-Request-Id"), Front: w.door.Front, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Status: status, ErrorCode: w.errCode, InjectedLatencyMS: w.latency.Milliseconds(), RequestContentType: r.Header.Get("Content-Type"),
		Traceparent: Traceparent(r.Header.Get("Traceparent")),
	}
	w.out.describe(&e)
	e.Fault, e.FaultRule = w.faults.journal()
	e.Evolved = w.faults.evolved
	if e.Fault != "" {
		x := w.exchange()
		x.Operation, x.Faults = e.Operation, strings.Split(e.Fault, ",")
		env.Coverage.Met(x)
	}
	var bodies Bodies
	if w.reqCapture != nil {
		bodies.Request, bodies.RequestBytes = w.reqCapture.Bytes(), w.reqCapture.Total()
	}
	if w.resCapture != nil {
		bodies.Response, bodies.ResponseBytes = w.resCapture.Bytes(), w.resCapture.Total()
	}
	hdr := headerBufs.Get().(*headerBuf)
	bodies.RequestHeaders = journal.AppendHeaders(append(append(append(hdr.req[:0], "Host: "...), r.Host...), '\n'), r.Header)
	bodies.ResponseHeaders = journal.AppendHeaders(hdr.res[:0], w.Header())
	env.Record(e, started, bodies)
	hdr.req, hdr.res = bodies.RequestHeaders, bodies.ResponseHeaders
	headerBufs.Put(hdr)
	w.releaseCaptures()
}

// headerBuf holds the lines of an exchange's headers while the journal
// copies them.
type headerBuf struct{ req, res []byte }

var headerBufs = sync.Pool{New: func() any { return new(headerBuf) }}

// logRequest logs the line of a request served. The handler is called
// directly: the logger would record the caller's program counter for a
// source no handler of the server's prints (a stack walk per request).
func (env *Env) logRequest(method, path string, status int, ws uint64, started time.Time, id string) {
	h := env.Log.Handler()
	if !h.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", method), slog.String("path", path), slog.Int("status", status),
		slog.Uint64("workspace", ws), slog.Duration("latency", env.WallClock().Sub(started)),
		slog.String("request_id", id))
	_ = h.Handle(context.Background(), rec)
}

// methods are the methods of HTTP, as constants of the program.
var methods = map[string]string{http.MethodGet: http.MethodGet, http.MethodPost: http.MethodPost, http.MethodDelete: http.MethodDelete,
	http.MethodHead: http.MethodHead, http.MethodPut: http.MethodPut, http.MethodPatch: http.MethodPatch, http.MethodOptions: http.MethodOptions}

// Bodies are what the journal keeps of an exchange's bodies: the bytes
// captured (up to the journal's cap) and how many there were in all; and
// its headers, as journal.Headers lines (none for an exchange that passed
// no edge).
type Bodies struct {
	Request, Response               []byte
	RequestBytes, ResponseBytes     int64
	RequestHeaders, ResponseHeaders []byte
}

// describe fills what a journal entry says of the front's outcome: the
// MCP method, the operation (the call's, with its status, error code and
// why its answer is outside the contract, if it is,
// when the request carried one) and the workspace (who made it, or whose
// file it was for).
func (o *Outcome) describe(e *journal.Entry) {
	e.MCPMethod, e.Operation, e.OutsideContract = o.MCPMethod, o.Operation, o.Outside
	if c := o.Call; c != nil {
		e.Operation, e.Status, e.ErrorCode, e.OutsideContract = c.Operation, c.Status, c.ErrorCode, c.Outside
	}
	if p := o.Principal; p != nil {
		e.WorkspaceID = p.WorkspaceID
	} else if f := o.File; f != nil {
		e.WorkspaceID = f.WS
	}
}

// RecordOffEdge counts and journals an exchange of front that passed no
// edge (a tool call over stdio), from its outcome as a front hands the
// outcome of a request that passed the edge (Writer.Hand; its Call is the
// operation the exchange was): the metrics and the journal the edge keeps
// for every request it serves (a 429 counts under the rate window's
// cause: such an exchange does not say whether a fault forced it).
// latency is what the call waited (the delay stage), started when it
// began; its bodies are JSON.
func (env *Env) RecordOffEdge(front string, o Outcome, latency time.Duration, started time.Time, b Bodies) {
	e := journal.Entry{ID: env.NewRequestID(), Front: front, ErrorCode: o.ErrorCode, InjectedLatencyMS: latency.Milliseconds(),
		RequestContentType: "application/json"}
	o.describe(&e)
	env.Metrics.Count(front, e.Operation, e.Status, false)
	env.Record(e, started, b)
}

// Record adds an exchange that started at started to the journal, whatever
// front carried it: it stamps the entry's times and duration, caps its
// strings, and keeps the bodies up to the journal's cap.
func (env *Env) Record(e journal.Entry, started time.Time, b Bodies) {
	if env.Journal == nil {
		return
	}
	// Every string is kept as a copy of at most its cap: the method, path
	// and query are substrings of the request line, and a substring keeps
	// the whole of what the client sent alive.
	capped := func(s string) string { return strings.Clone(s[:min(len(s), journal.MaxString)]) }
	if m, ok := methods[e.Method]; ok {
		e.Method = m // a constant: nothing to copy
	} else {
		e.Method = capped(e.Method)
	}
	e.Path, e.Query, e.MCPMethod, e.RequestContentType = capped(e.Path), capped(e.Query), capped(e.MCPMethod), capped(e.RequestContentType)
	if e.Traceparent != "" {
		e.Traceparent = strings.Clone(e.Traceparent)
	}
	now := env.WallClock()
	e.Time, e.SimTime = started.UTC(), env.Eng.Clock().Now().UTC() // UTC drops the monotonic reading too
	e.DurationMS = float64(now.Sub(started).Microseconds()) / 1000
	e.RequestBytes, e.ResponseBytes = b.RequestBytes, b.ResponseBytes
	kept := func(b []byte) int64 { return int64(min(len(b), env.Journal.BodyCap())) }
	e.RequestBodyTruncated = e.RequestBytes > kept(b.Request)
	e.ResponseBodyTruncated = e.ResponseBytes > kept(b.Response)
	e.AnswerCut = cut(e.Fault)
	p := journal.Parts{Request: b.Request, Response: b.Response, RequestHeaders: b.RequestHeaders, ResponseHeaders: b.ResponseHeaders}
	if sb, ok := env.Eng.SandboxOf(e.WorkspaceID); ok {
		e.SandboxID = sb.ID
		if ring, ok := env.Journals.Of(e.WorkspaceID); ok {
			ring.Keep(e, p)
		}
	}
	env.Journal.Keep(e, p)
}

// cut reports whether the faults an exchange met (its journal entry's
// Fault) broke its answer.
func cut(faults string) bool {
	for faults != "" {
		var kind string
		kind, faults, _ = strings.Cut(faults, ",")
		if fault.Breaks(kind) {
			return true
		}
	}
	return false
}

// WriteError answers with the spec's error object for err.
func WriteError(w *Writer, err error) {
	e := sim.AsError(err)
	if e.Kind == sim.EINTERNAL {
		w.internal = err
	}
	w.errCode = e.Code
	status, body := wire.ErrorOf(err)
	WriteJSON(w, status, body)
}

// WriteJSON answers with v as JSON (HTML characters are not escaped).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, ok := wire.Marshal(v)
	defer body.Release()
	if !ok {
		status = http.StatusInternalServerError
	}
	WriteRaw(w, status, body.Bytes())
}

// WriteRaw answers with a body already encoded as JSON.
func WriteRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// ServeDocument serves a JSON document such as openapi.json.
func ServeDocument(w http.ResponseWriter, r *http.Request, doc []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(doc)
	}
}

// HasPathPrefix reports whether path is prefix or lies under it.
func HasPathPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// Identify authenticates a request that counts against no rate window (an
// answer outside the operations, an MCP protocol message), puts its
// workspace's window on the answer and keeps who it is for the journal;
// a credential refused is the error, for a front that answers with it
// (and its Challenge). resource is the protected resource the front is
// (gate.ResourceAPI, gate.ResourceMCP): a token issued for another alone
// is refused.
func (env *Env) Identify(w *Writer, authorization, resource string) (sim.Principal, error) {
	pass, err := env.Gate.Identify(authorization, resource, "")
	if err != nil {
		return sim.Principal{}, err
	}
	w.out.Principal = &pass.Principal
	wire.SetRateHeaders(w.Header(), pass.Rate)
	return pass.Principal, nil
}
