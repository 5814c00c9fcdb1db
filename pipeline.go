package mediamock

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/gorilla/mux"

	"github.com/mediamock/mediamock/sim"
)

// call is one API request on its way through the pipeline.
type call struct {
	w    *respWriter
	r    *http.Request
	p    sim.Principal
	vars map[string]string
	q    url.Values // the query, parsed once
	op   string
	s    *Server
}

// handlerFunc serves one operation: it returns a status and a body to
// encode as JSON, or an error for the error object.
type handlerFunc func(c *call) (int, any, error)

// ServeHTTP is the request pipeline: body size cap, route, then for API
// operations authenticate, rate limit, scope, validate, handle.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	started := s.opts.WallClock()
	rw := &respWriter{ResponseWriter: w, s: s, strict: s.opts.Strict}
	rw.Header().Set("X-Request-Id", requestID(s.reqSeq.Add(1)))
	if s.journal != nil && !strings.HasPrefix(r.URL.Path, ControlPath+"/") {
		rw.reqCapture, rw.resCapture = newCapture(s.journal.bodyCap), newCapture(s.journal.bodyCap)
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving request", "request_id", rw.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !rw.wroteHeader {
				writeError(rw, &sim.Error{Kind: sim.EINTERNAL, Code: "internal_error", Message: "Internal server error."})
			}
		}
		rw.flush(s, r)
		s.record(rw, r, started)
	}()
	limit, tooBig := s.bodyLimit(r)
	if r.ContentLength > limit {
		rw.Header().Set("Connection", "close")
		writeError(rw, tooBig)
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(rw, r.Body, limit)
		if rw.reqCapture != nil {
			r.Body = &captureBody{ReadCloser: r.Body, c: rw.reqCapture}
		}
	}
	sharedRouter().ServeHTTP(rw, r)
}

// requestID renders req_000000000042.
func requestID(n uint64) string {
	b := make([]byte, 0, 16)
	b = append(b, "req_"...)
	digits := strconv.AppendUint(nil, n, 10)
	for i := len(digits); i < 12; i++ {
		b = append(b, '0')
	}
	return string(append(b, digits...))
}

// Body caps below the general one.
const (
	// uploadOverhead is what a multipart form or a JSON object may add
	// around an image.
	uploadOverhead = 64 << 10
	// MaxSnapshotBytes caps a snapshot being restored.
	MaxSnapshotBytes = 4 << 30
)

// bodyLimit is the cap of a request's body, and the error of a body over
// it. Uploads are capped near their 10 MiB image limit, so that a larger
// file is refused while it is read, not after it is buffered; snapshots
// have a cap of their own.
func (s *Server) bodyLimit(r *http.Request) (int64, error) {
	switch {
	case r.URL.Path == BasePath+"/uploads":
		limit := int64(sim.MaxImageBytes + uploadOverhead)
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
			limit = int64(base64.StdEncoding.EncodedLen(sim.MaxImageBytes)) + uploadOverhead
		}
		if s.opts.MaxBodyBytes < limit {
			break // the server's own cap is the tighter one
		}
		return limit, fileTooLarge()
	case r.URL.Path == ControlPath+"/snapshot" && r.Method == http.MethodPut:
		return MaxSnapshotBytes, tooLarge(MaxSnapshotBytes)
	}
	return s.opts.MaxBodyBytes, tooLarge(s.opts.MaxBodyBytes)
}

func fileTooLarge() *sim.Error {
	return &sim.Error{Kind: sim.ETOOLARGE, Code: "file_too_large",
		Message: fmt.Sprintf("The image is over 10 MiB (%d bytes).", sim.MaxImageBytes), Details: map[string]any{"limit_bytes": sim.MaxImageBytes}}
}

// route is one operation of the API.
type route struct {
	method, path, op string
	h                handlerFunc
}

// sharedRouter is the routing table, built once per process: handlers find
// their server in the respWriter, so servers after the first cost nothing
// to route.
var sharedRouter = sync.OnceValue(func() *mux.Router {
	c, err := loadService()
	if err != nil {
		panic(err) // New loads the contracts before any request is served
	}
	ctl, err := loadControl()
	if err != nil {
		panic(err)
	}
	return newRouter(c, ctl)
})

func newRouter(c, ctl *contract) *mux.Router {
	// Paths are matched as sent: //assets is not quietly redirected to /assets.
	router := mux.NewRouter().SkipClean(true)
	router.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w.(*respWriter), &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found",
			Message: fmt.Sprintf("No operation at %s %s.", r.Method, r.URL.Path)})
	})
	api := router.PathPrefix(BasePath).Subrouter()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range apiRoutes() {
		if c.routes[rt.op] == nil {
			panic("route " + rt.op + " is not in openapi.json")
		}
		api.Handle(rt.path, apiHandler(c, rt)).Methods(rt.method)
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	api.HandleFunc("/openapi.json", func(w http.ResponseWriter, r *http.Request) { serveBytes(w, r, OpenAPIDocument) }).
		Methods(http.MethodGet, http.MethodHead)
	allowed["/openapi.json"] = []string{http.MethodGet, http.MethodHead}
	paths = append(paths, "/openapi.json")
	for _, p := range paths {
		methodNotAllowed(api, p, allowed[p])
	}
	mountFiles(router)
	mountControl(router, ctl)
	return router
}

// methodNotAllowed answers other methods on a known path: 405 with Allow.
// It must be registered after the path's own routes.
func methodNotAllowed(router *mux.Router, path string, methods []string) {
	allow := strings.Join(methods, ", ")
	router.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w.(*respWriter), &sim.Error{Kind: sim.ENOTALLOWED, Code: "method_not_allowed",
			Message: fmt.Sprintf("%s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, allow),
			Details: map[string]any{"allowed_methods": methods}})
	})
}

// serveBytes serves a JSON document.
func serveBytes(w http.ResponseWriter, r *http.Request, doc []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(doc)
	}
}

// api wraps an operation's handler with authentication, the rate limit, the
// scope check and request validation.
func apiHandler(c *contract, rt route) http.Handler {
	scope := c.scope(rt.op)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := w.(*respWriter)
		s := rw.s
		rw.op = rt.op
		p, err := s.authenticate(r)
		if err != nil {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="api", error="invalid_token"`)
			writeError(rw, err)
			return
		}
		rw.principal = &p
		d := s.eng.Allow(p.WorkspaceID)
		setRateHeaders(rw.Header(), d)
		if !d.Allowed {
			secs := int(d.RetryAfter / time.Second)
			rw.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(rw, &sim.Error{Kind: sim.ERATELIMIT, Code: "rate_limited",
				Message: fmt.Sprintf("Rate limit of %d requests per minute reached; retry in %d seconds.", d.Limit, secs),
				Details: map[string]any{"limit": d.Limit, "retry_after_seconds": secs}})
			return
		}
		if !p.HasScope(scope) {
			writeError(rw, &sim.Error{Kind: sim.EFORBIDDEN, Code: "insufficient_scope",
				Message: fmt.Sprintf("This operation needs the %s scope; the token has %s.", scope, scopeList(p.Scopes)),
				Details: map[string]any{"required_scope": scope, "granted_scopes": p.Scopes}})
			return
		}
		if status := s.faults.take(rt.op); status != 0 {
			if status == http.StatusTooManyRequests {
				d.RetryAfter = max(time.Second, d.Reset.Sub(s.eng.Clock().Now()).Round(time.Second))
				rw.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfter/time.Second)))
			}
			writeError(rw, forcedError(status, d))
			return
		}
		vars, query := mux.Vars(r), r.URL.Query()
		if err := s.c.validateRequest(r, rt.op, vars, query); err != nil {
			if e := sim.AsError(err); rt.op == "createUpload" && e.Code == "payload_too_large" && e.Details["limit_bytes"] != s.opts.MaxBodyBytes {
				err = fileTooLarge()
			}
			writeError(rw, err)
			return
		}
		if d := s.faults.delay(rt.op); d > 0 {
			rw.latency = d
			ctx, cancel := s.untilStop(r.Context())
			s.sleep(ctx, d)
			cancel()
		}
		status, body, err := rt.h(&call{w: rw, r: r, p: p, vars: vars, q: query, op: rt.op, s: s})
		if err != nil {
			writeError(rw, err)
			return
		}
		writeJSON(rw, status, body)
	})
}

func scopeList(scopes []string) string {
	if len(scopes) == 0 {
		return "none"
	}
	return strings.Join(scopes, ", ")
}

func setRateHeaders(h http.Header, d sim.RateDecision) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(d.Reset.Unix(), 10))
}

// authenticate resolves Authorization: Bearer <token>.
func (s *Server) authenticate(r *http.Request) (sim.Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return sim.Principal{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "missing_credentials",
			Message: "Send an API key or access token as Authorization: Bearer <token>."}
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return sim.Principal{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_credentials",
			Message: "The Authorization header must be Bearer <token>."}
	}
	p, ok := s.eng.Authenticate(token)
	if !ok {
		return sim.Principal{}, &sim.Error{Kind: sim.EUNAUTHORIZED, Code: "invalid_credentials",
			Message: "The bearer token is not a known API key or access token."}
	}
	return p, nil
}

// statusOf maps an engine error kind to an HTTP status.
var statusOf = map[sim.Kind]int{
	sim.EINVALID:      http.StatusBadRequest,
	sim.EUNAUTHORIZED: http.StatusUnauthorized,
	sim.EPAYMENT:      http.StatusPaymentRequired,
	sim.EFORBIDDEN:    http.StatusForbidden,
	sim.ENOTFOUND:     http.StatusNotFound,
	sim.ENOTALLOWED:   http.StatusMethodNotAllowed,
	sim.ECONFLICT:     http.StatusConflict,
	sim.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	sim.EUNSUPPORTED:  http.StatusUnsupportedMediaType,
	sim.ERATELIMIT:    http.StatusTooManyRequests,
	sim.EINTERNAL:     http.StatusInternalServerError,
	sim.EUNAVAILABLE:  http.StatusServiceUnavailable,
}

type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func writeError(w *respWriter, err error) {
	e := sim.AsError(err)
	status, ok := statusOf[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	if e.Kind == sim.EINTERNAL {
		w.internal = err
	}
	w.errCode = e.Code
	writeJSON(w, status, errorBody{Error: errorObject{Code: e.Code, Message: e.Message, Details: e.Details}})
}

var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON answers with v as JSON (HTML characters are not escaped).
func writeJSON(w http.ResponseWriter, status int, v any) {
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

// respWriter records what a request was answered, buffering the body in
// strict mode so that a response that breaks the contract can be replaced.
type respWriter struct {
	http.ResponseWriter
	s           *Server
	strict      bool
	status      int
	wroteHeader bool
	buf         bytes.Buffer
	op          string
	principal   *sim.Principal
	internal    error
	errCode     string
	latency     time.Duration
	reqCapture  *capture // the journal's copy of the bodies
	resCapture  *capture
}

func (w *respWriter) releaseCaptures() {
	if w.reqCapture != nil {
		w.reqCapture.release()
		w.resCapture.release()
		w.reqCapture, w.resCapture = nil, nil
	}
}

func (w *respWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader, w.status = true, status
	if !w.strict || w.op == "" {
		// Only the operations of openapi.json are checked (and so held
		// back) in strict mode; files and the control API pass straight.
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *respWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.strict && w.op != "" {
		return w.buf.Write(b)
	}
	if w.resCapture != nil {
		w.resCapture.keep(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *respWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// flush ends the response: in strict mode it validates it first.
func (w *respWriter) flush(s *Server, r *http.Request) {
	if w.internal != nil {
		s.log.Error("internal error", "request_id", w.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "err", w.internal)
	}
	if !w.strict || w.op == "" {
		return
	}
	if !w.wroteHeader {
		w.status = http.StatusOK
	}
	body := w.buf.Bytes()
	if w.op != "" {
		if err := s.validateResponse(r, w.op, w.status, w.Header(), body); err != nil {
			s.log.Error("response breaks openapi.json", "request_id", w.Header().Get("X-Request-Id"), "op", w.op, "status", w.status, "err", err)
			b, _ := json.Marshal(errorBody{Error: errorObject{Code: "response_validation_failed",
				Message: "The mock's response breaks openapi.json (strict mode): " + err.Error(),
				Details: map[string]any{"operation": w.op, "status": w.status}}})
			b = append(b, '\n')
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.status, w.errCode, body = http.StatusInternalServerError, "response_validation_failed", b
		}
	}
	if w.resCapture != nil {
		w.resCapture.keep(body)
	}
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(body)
}

// validateResponse checks a response against its operation in openapi.json.
func (s *Server) validateResponse(r *http.Request, op string, status int, h http.Header, body []byte) error {
	route := s.c.routes[op]
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, Route: route, Options: validationOptions},
		Status:                 status,
		Header:                 h,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// memResponse is a ResponseWriter in memory, for the in-memory transport.
type memResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newMemResponse() *memResponse { return &memResponse{header: http.Header{}} }

func (m *memResponse) Header() http.Header { return m.header }

func (m *memResponse) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}

func (m *memResponse) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return m.body.Write(b)
}

func (m *memResponse) response(r *http.Request) *http.Response {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", m.status, http.StatusText(m.status)), StatusCode: m.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: m.header, Body: io.NopCloser(bytes.NewReader(m.body.Bytes())),
		ContentLength: int64(m.body.Len()), Request: r,
	}
}
