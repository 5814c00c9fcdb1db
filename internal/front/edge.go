package front

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// Check validates the responses of the front's operations against
	// openapi.json in strict mode (REST, whose responses are the
	// operations' own).
	Check bool
	// BodyLimit, when set, gives the cap of a request's body and the error
	// of a body over it, applied before the front; a front that must know
	// whom it serves first (REST: authentication before the size) calls
	// LimitBody itself.
	BodyLimit func(*http.Request) (int64, error)
}

// Serve passes a request through the edge: a request id, a Date from the
// simulated clock, panic recovery, the body cap when the door has one, then
// next; afterwards it checks the response in strict mode and records it in
// the journal and the coverage.
func (env *Env) Serve(w http.ResponseWriter, r *http.Request, d Door, next func(*Writer, *http.Request)) {
	started := env.WallClock()
	rw := &Writer{ResponseWriter: w, env: env, door: d}
	h := rw.Header()
	h.Set("X-Request-Id", env.NewRequestID())
	// The Date agrees with X-RateLimit-Reset, Retry-After and every
	// timestamp in bodies, whatever the clock mode.
	h.Set("Date", env.Eng.Clock().Now().UTC().Format(http.TimeFormat))
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
		rw.flush(r)
		env.record(rw, r, started)
	}()
	if d.BodyLimit != nil {
		if max, tooBig := d.BodyLimit(r); !LimitBody(rw, r, max, tooBig) {
			return
		}
	}
	next(rw, r)
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
	b := make([]byte, 0, 16)
	b = append(b, "req_"...)
	digits := strconv.AppendUint(nil, n, 10)
	for i := len(digits); i < 12; i++ {
		b = append(b, '0')
	}
	return string(append(b, digits...))
}

// Writer is the ResponseWriter of a request that passed the edge. It
// records what the request was answered and, in strict mode, buffers the
// body of an operation of openapi.json so that a response that breaks the
// contract can be replaced.
type Writer struct {
	http.ResponseWriter
	env         *Env
	door        Door
	op          string
	call        *Call
	mcpMethod   string
	status      int
	wroteHeader bool
	buf         bytes.Buffer
	principal   *sim.Principal
	internal    error
	errCode     string
	latency     time.Duration
	reqCapture  *journal.Capture // the journal's copy of the bodies
	resCapture  *journal.Capture
}

// SetOperation names the operation of openapi.json the request is: it is
// counted in the coverage and, in strict mode, its response is checked.
func (w *Writer) SetOperation(op string) { w.op = op }

// SetPrincipal records who made the request.
func (w *Writer) SetPrincipal(p sim.Principal) { w.principal = &p }

// SetLatency records the latency injected into the request.
func (w *Writer) SetLatency(d time.Duration) { w.latency = d }

// Call is the call of an operation a request carried inside another
// protocol (an MCP tool call), as the journal records it.
type Call struct {
	Operation string
	// Status is what the operation answered, as REST would have: 201, 403, 429.
	Status    int
	ErrorCode string
}

// SetCall records the call of an operation the request carried inside its
// protocol (an MCP tool call): the journal entry names the operation, with
// the status and error code the operation answered. The front counts the
// call in the coverage and checks its result itself.
func (w *Writer) SetCall(c Call) { w.call = &c }

// SetMCPMethod records the JSON-RPC method of an MCP message, for the journal.
func (w *Writer) SetMCPMethod(m string) { w.mcpMethod = m }

func (w *Writer) strict() bool { return w.env.Strict && w.door.Check && w.op != "" }

// WriteHeader sends the status, or holds it back in strict mode.
func (w *Writer) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader, w.status = true, status
	if !w.strict() {
		w.ResponseWriter.WriteHeader(status)
	}
}

// Write sends body bytes, or holds them back in strict mode.
func (w *Writer) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.strict() {
		return w.buf.Write(b)
	}
	if w.resCapture != nil {
		w.resCapture.Keep(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// flush ends the response: in strict mode it validates it first.
func (w *Writer) flush(r *http.Request) {
	env := w.env
	if w.internal != nil {
		env.Log.Error("internal error", "request_id", w.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "err", w.internal)
	}
	if !w.strict() {
		return
	}
	if !w.wroteHeader {
		w.status = http.StatusOK
	}
	body := w.buf.Bytes()
	if err := env.API.ValidateResponse(r, w.op, w.status, w.Header(), body); err != nil {
		env.Log.Error("response breaks openapi.json", "request_id", w.Header().Get("X-Request-Id"), "op", w.op, "status", w.status, "err", err)
		b, _ := json.Marshal(wire.ErrorBody{Error: wire.ErrorObject{Code: "response_validation_failed",
			Message: "The mock's response breaks openapi.json (strict mode): " + err.Error(),
			Details: map[string]any{"operation": w.op, "status": w.status}}})
		b = append(b, '\n')
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.status, w.errCode, body = http.StatusInternalServerError, "response_validation_failed", b
	}
	if w.resCapture != nil {
		w.resCapture.Keep(body)
	}
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(body)
}

func (w *Writer) releaseCaptures() {
	if w.reqCapture != nil {
		w.reqCapture.Release()
		w.resCapture.Release()
		w.reqCapture, w.resCapture = nil, nil
	}
}

// record adds a finished request to the coverage and the journal.
func (env *Env) record(w *Writer, r *http.Request, started time.Time) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if w.op != "" {
		env.Coverage.Hit(w.door.Front, w.op, status)
	}
	if env.Log.Enabled(context.Background(), slog.LevelInfo) {
		var ws uint64
		if w.principal != nil {
			ws = w.principal.WorkspaceID
		}
		env.Log.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
			slog.Uint64("workspace", ws), slog.Duration("latency", env.WallClock().Sub(started)),
			slog.String("request_id", w.Header().Get("X-Request-Id")))
	}
	if env.Journal == nil || !w.door.Journaled {
		w.releaseCaptures()
		return
	}
	capped := func(s string) string { return s[:min(len(s), journal.MaxString)] }
	e := journal.Entry{
		ID: w.Header().Get("X-Request-Id"), Time: sim.FormatTime(started), SimTime: sim.FormatTime(env.Eng.Clock().Now()),
		Front: w.door.Front, Method: capped(r.Method), Path: capped(r.URL.Path), Query: capped(r.URL.RawQuery), MCPMethod: capped(w.mcpMethod),
		Operation: w.op, Status: status, ErrorCode: w.errCode, DurationMS: float64(env.WallClock().Sub(started).Microseconds()) / 1000,
		InjectedLatencyMS: w.latency.Milliseconds(), RequestContentType: capped(r.Header.Get("Content-Type")),
	}
	if w.call != nil {
		e.Operation, e.Status, e.ErrorCode = w.call.Operation, w.call.Status, w.call.ErrorCode
	}
	if w.principal != nil {
		e.WorkspaceID = w.principal.WorkspaceID
	}
	var reqBody, resBody []byte
	if w.reqCapture != nil {
		reqBody, e.RequestBytes = w.reqCapture.Bytes(), w.reqCapture.Total()
		e.RequestBodyTruncated = e.RequestBytes > int64(len(reqBody))
	}
	if w.resCapture != nil {
		resBody, e.ResponseBytes = w.resCapture.Bytes(), w.resCapture.Total()
		e.ResponseBodyTruncated = e.ResponseBytes > int64(len(resBody))
	}
	env.Journal.Add(e, reqBody, resBody)
	w.releaseCaptures()
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

var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// WriteJSON answers with v as JSON (HTML characters are not escaped).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer jsonBuffers.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal_error","message":"Internal server error."}}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
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

// Answer writes what a handler returned: the error object, or body as JSON.
func Answer(w *Writer, status int, body any, err error) {
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, status, body)
}

// HasPathPrefix reports whether path is prefix or lies under it.
func HasPathPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// SetRateHeaders reports a workspace's rate window in the X-RateLimit-*
// headers every response to an authenticated request carries.
func SetRateHeaders(h http.Header, d sim.RateDecision) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(d.Reset.Unix(), 10))
}
