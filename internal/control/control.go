// Package control is the control API front under /_mock, described by
// control.json: it matches a request to its operation (the route table is
// read from control.json), guards it (the Host, the Origin, the control
// credential, a JSON Content-Type on what changes state), reads its body
// once and hands the call to the control plane (internal/controlplane),
// whose typed operations answer it. What only HTTP carries it serves
// itself: control.json as a document, snapshots and their restore (a
// binary state of up to gigabytes, streamed), the event stream
// (server-sent events) and the Prometheus metrics.
package control

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/mediamock/mediamock/internal/controlplane"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/routes"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Path is the reserved prefix of the control API. It lies outside the
// service's base path, so it can never collide with the service's own paths.
const Path = controlplane.Path

// MaxSnapshotBytes caps a snapshot being restored.
const MaxSnapshotBytes = 4 << 30

// The operations the control API serves itself, with what only HTTP
// carries; the control plane serves every other.
const (
	opHealth   = "getHealth"
	opDocument = "getControlDocument"
	opSnapshot = "getSnapshot"
	opRestore  = "restoreSnapshot"
	opEvents   = "streamEvents"
	opMetrics  = "getMetrics"
)

// handler serves an operation the control API serves itself, once the
// request is let in (s: the scope its credential reaches).
type handler func(f *Front, w *edge.Writer, r *http.Request, m routes.Match, s controlplane.Scope)

var own = map[string]handler{
	opDocument: func(f *Front, w *edge.Writer, r *http.Request, _ routes.Match, _ controlplane.Scope) {
		edge.ServeDocument(w, r, f.document)
	},
	opSnapshot: (*Front).snapshot,
	// Streamed to a file as it comes: the validator would buffer it.
	opRestore: (*Front).restore,
	opEvents:  (*Front).events,
	opMetrics: (*Front).metrics,
}

// Front serves the control API of one server.
type Front struct {
	env      *edge.Env
	plane    *controlplane.Plane
	document []byte      // control.json, served at /_mock/openapi.json
	routes   *routed     // its routes, and their table
	streams  streamSlots // event streams open
}

// New returns the control front of a server; document is control.json,
// whose routes it serves (read, not parsed: a server answers its health
// check without parsing it). A document Check refuses makes it panic.
func New(env *edge.Env, plane *controlplane.Plane, document []byte) *Front {
	rt := read(document)
	if rt.err != nil {
		panic("control: " + rt.err.Error())
	}
	// The table is made beside the rest of the start: a control request
	// that comes first waits for it.
	go rt.table()
	return &Front{env: env, plane: plane, document: document, routes: rt}
}

// tables are the route tables of the documents served, read once each.
var tables sync.Map // docKey -> *routed

type docKey struct {
	data *byte
	size int
}

type routed struct {
	once  sync.Once
	rs    []routes.Route
	err   error
	table func() *routes.Table // made on first use
}

// read reads a document's routes and checks them, once: the embedded
// control.json's routes were read at build time (routes.gen.go). Their
// table (gorilla/mux's regular expressions, the longest part) is made on
// first use.
func read(document []byte) *routed {
	v, _ := tables.LoadOrStore(docKey{unsafe.SliceData(document), len(document)}, &routed{})
	rt := v.(*routed)
	rt.once.Do(func() {
		if len(document) == documentSize && crc32.ChecksumIEEE(document) == documentSum {
			rt.rs = slices.Clone(documentRoutes) // read at build time
		} else {
			rt.rs, rt.err = routes.Read(document)
		}
		if rt.err == nil {
			rt.err = routes.Check("control.json", rt.rs, Operations())
		}
		rt.table = sync.OnceValue(func() *routes.Table { return routes.TableOf(Path, rt.rs) })
	})
	return rt
}

// Operations are the operationIds the control API has a handler for: the
// control plane's and its own.
func Operations() []string {
	out := controlplane.Operations()
	for op := range own {
		out = append(out, op)
	}
	return out
}

// Check holds a control document to the handlers, as the server does at
// start: every operation has a handler, and every handler an operation.
func Check(document []byte) error {
	return read(document).err
}

// Routes lists the operationIds of a control document, in its order: the
// values of the metrics' operation label.
func Routes(document []byte) ([]string, error) {
	rt := read(document)
	out := make([]string, len(rt.rs))
	for i, r := range rt.rs {
		out[i] = r.ID
	}
	return out, rt.err
}

// BodyLimit is the cap of a control request's body: snapshots have their own.
func (f *Front) BodyLimit(r *http.Request) (int64, error) {
	if r.URL.Path == Path+"/snapshot" && r.Method == http.MethodPut {
		return MaxSnapshotBytes, problem.TooLarge(MaxSnapshotBytes)
	}
	return f.env.BodyCap(r)
}

// Serve serves a control request that passed the edge: the route, the
// guard and the scope, then the control plane's operation (or its own).
func (f *Front) Serve(w *edge.Writer, r *http.Request) {
	if max, tooBig := f.BodyLimit(r); !edge.LimitBody(w, r, max, tooBig) {
		return
	}
	m := f.routes.table().Match(r)
	switch {
	case m.Allow != "":
		w.Header().Set("Allow", m.Allow)
		edge.WriteError(w, wire.MethodNotAllowed(r.Method, r.URL.Path, m.Allow, strings.Split(m.Allow, ", ")))
		return
	case m.Name == "":
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	w.Hand(edge.Outcome{Operation: m.Name}) // for the metrics
	var s controlplane.Scope
	if m.Name != opHealth {
		var err error
		if s, err = f.guard(r, m.Name); err == nil {
			s, err = f.plane.Narrow(m.Name, s, m.Vars, r.URL.Query())
		}
		if err != nil {
			if ch := controlplane.Challenge(r.Header.Get("Authorization"), err); ch != "" {
				w.Header().Set("WWW-Authenticate", ch)
			}
			edge.WriteError(w, err)
			return
		}
	}
	if h := own[m.Name]; h != nil {
		h(f, w, r, m, s)
		return
	}
	c := f.call(r, m)
	if controlplane.TakesBody(m.Name) {
		c.Body, c.BodyErr = readBody(r)
	}
	status, body, err := f.plane.Serve(r.Context(), c, s)
	answer(w, status, body, err)
}

// call is a request as a call of the control plane's operation m.
func (f *Front) call(r *http.Request, m routes.Match) *controlplane.Call {
	return &controlplane.Call{Op: m.Name, Authorization: r.Header.Get("Authorization"), Vars: m.Vars, Query: r.URL.Query(),
		ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"), View: f.env.View(r)}
}

// readBody reads a request's body once, into one buffer of its declared
// size; nil when it has none.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, 64<<20)) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	data := buf.Bytes()
	if data == nil {
		data = []byte{}
	}
	return data, err
}

// answer writes what an operation answered: the error object, or the body
// (a controlplane.Raw as it is, a controlplane.Stream as it is written, any
// other as JSON).
func answer(w *edge.Writer, status int, body any, err error) {
	if err != nil {
		edge.WriteError(w, err)
		return
	}
	switch b := body.(type) {
	case controlplane.Raw:
		w.Header().Set("Content-Type", b.ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(b.Data)))
		w.WriteHeader(status)
		w.Write(b.Data)
	case controlplane.Stream:
		// Written as it is made: past the head, an error can only end it.
		w.Header().Set("Content-Type", b.ContentType)
		if b.Filename != "" {
			w.Header().Set("Content-Disposition", `attachment; filename="`+b.Filename+`"`)
		}
		w.WriteHeader(status)
		b.Write(w)
	default:
		edge.WriteJSON(w, status, body)
	}
}

// guard protects the control API: from web pages (a foreign Host or
// Origin), with the control token when the server has one (or a
// sandbox's, for that sandbox alone), and with a JSON Content-Type on every
// state-changing request, which a page cannot send across origins without a
// preflight. On a listener beyond loopback, snapshots (the whole state,
// tokens included) need a control token. It returns the scope the
// credential reaches.
func (f *Front) guard(r *http.Request, op string) (controlplane.Scope, error) {
	if err := f.env.Guard(r, "the control API"); err != nil {
		return controlplane.Scope{}, err
	}
	s, err := f.plane.Credential(op, r.Header.Get("Authorization"), r.URL.Query())
	if err != nil {
		return s, err
	}
	if (op == opSnapshot || op == opRestore) && f.env.Exposed && f.env.ControlToken == "" {
		return s, &sim.Error{Kind: sim.EFORBIDDEN, Code: "control_token_required",
			Message: "The server listens beyond loopback without a control token: snapshots (every token included) need --control-token (MOCKSERVER_CONTROL_TOKEN)."}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && op != opRestore {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			got := r.Header.Get("Content-Type")
			if got == "" {
				got = "(none)"
			}
			return s, &sim.Error{Kind: sim.EUNSUPPORTED, Code: "unsupported_media_type",
				Message: "Content-Type " + got + " is not accepted; state-changing control requests send application/json (an empty body may be {}).",
				Details: map[string]any{"accepted": []string{"application/json"}}}
		}
	}
	return s, nil
}

// validated answers with the error of a request to an operation the
// control API serves itself that control.json refuses (false).
func (f *Front) validated(w *edge.Writer, r *http.Request, m routes.Match) bool {
	c := f.call(r, m)
	if err := f.plane.Validate(r.Context(), c); err != nil {
		edge.WriteError(w, err)
		return false
	}
	return true
}

func (f *Front) metrics(w *edge.Writer, r *http.Request, m routes.Match, _ controlplane.Scope) {
	if f.validated(w, r, m) {
		f.env.Metrics.Handler().ServeHTTP(w, r)
	}
}

// snapshot writes the whole state, consistent as of one moment.
func (f *Front) snapshot(w *edge.Writer, _ *http.Request, _ routes.Match, _ controlplane.Scope) {
	var buf bytes.Buffer
	if _, err := f.env.Eng.Snapshot(&buf); err != nil {
		edge.WriteError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="mediamock-snapshot.db"`)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// restore replaces the whole state with a snapshot streamed to a file as
// it comes, and answers with the clock of the restored state.
func (f *Front) restore(w *edge.Writer, r *http.Request, _ routes.Match, _ controlplane.Scope) {
	body := &readErr{r: r.Body}
	if err := f.plane.RestoreState(body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(body.err, &mbe) {
			err = problem.TooLarge(mbe.Limit)
		}
		edge.WriteError(w, err)
		return
	}
	edge.WriteJSON(w, http.StatusOK, controlplane.ClockOf(f.env.Eng))
}

// readErr remembers the error its reader returned.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}
