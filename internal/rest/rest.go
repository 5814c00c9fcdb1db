// Package rest is the REST front: the service's operations under /api/v1,
// in the order of its specification, and the files under /files/. Every
// operation passes the gate (authentication, rate limit, scope, forced
// faults), is validated against openapi.json and is served by the engine.
package rest

import (
	"context"
	"encoding/base64"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/routes"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// BasePath is the REST base path of the service.
const BasePath = wire.BasePath

// Front serves the REST API of one server.
type Front struct {
	env      *edge.Env
	ops      *ops.Env // the operations' pipeline
	document []byte   // openapi.json, served at /api/v1/openapi.json
	etags    etags    // of files served
}

// New returns the REST front of a server, which calls the operations
// through pipeline; document is openapi.json.
func New(env *edge.Env, pipeline *ops.Env, document []byte) *Front {
	return &Front{env: env, ops: pipeline, document: document}
}

const documentOp = "/openapi.json"

// tables match requests to operations, one table per contract (a process
// parses openapi.json once, so it builds one table).
var tables sync.Map // *contract.Contract -> *routes.Table

func (f *Front) table() *routes.Table {
	if t, ok := tables.Load(f.env.API); ok {
		return t.(*routes.Table)
	}
	t := routes.New(BasePath)
	for _, op := range f.env.API.Operations() {
		if op.Scope != "" {
			t.Add(op.Method, op.Path, op.ID)
		}
	}
	t.Add(http.MethodGet, "/openapi.json", documentOp)
	t.Add(http.MethodHead, "/openapi.json", documentOp)
	kept, _ := tables.LoadOrStore(f.env.API, t.Seal())
	return kept.(*routes.Table)
}

// Serve serves a request that passed the edge. Every answer to a request
// whose credential names a workspace carries its rate window; only the
// operations count.
func (f *Front) Serve(w *edge.Writer, r *http.Request) {
	m := routes.Match{}
	var who *sim.Principal // whom an answer that does not count is for
	files := strings.HasPrefix(r.URL.Path, wire.FilesPath)
	if !files {
		m = f.table().Match(r)
	}
	if files || m.Name == "" || m.Name == documentOp {
		who = f.peek(w, r)
		if max, tooBig := f.env.BodyCap(r); !edge.LimitBody(w, r, max, tooBig) {
			return
		}
	}
	switch {
	case files:
		f.serveFile(w, r, who)
	case m.Allow != "":
		w.Header().Set("Allow", m.Allow)
		edge.WriteError(w, wire.MethodNotAllowed(r.Method, r.URL.Path, m.Allow, strings.Split(m.Allow, ", ")))
	case m.Name == "":
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
	case m.Name == documentOp:
		edge.ServeDocument(w, r, f.document)
	default:
		f.operation(w, r, m)
	}
}

// peek puts the rate window of the request's workspace, if its credential
// names one, on an answer that does not count, and says whose it is (nil:
// no one's).
func (f *Front) peek(w *edge.Writer, r *http.Request) *sim.Principal {
	if authorization := r.Header.Get("Authorization"); authorization != "" {
		// The answer is not about the credential: a refused one is no error.
		if p, err := f.env.Identify(w, authorization, gate.ResourceAPI); err == nil {
			return &p
		}
	}
	return nil
}

// operation runs an operation through the pipeline (ops.Invoke) and
// writes its answer. What is REST's own: the parameters from the route and
// the query string, the body read and decoded once (when the pipeline asks
// for it, after the gate), the body cap, applied once the credential is
// known (a declared length over it is refused without reading the body,
// and without counting), and the HTTP response.
func (f *Front) operation(w *edge.Writer, r *http.Request, m routes.Match) {
	env := f.env
	in := ops.Invocation{Ctx: r.Context(), Front: "rest", Op: m.Name, RequestID: w.Header().Get("X-Request-Id"),
		Authorization: r.Header.Get("Authorization"), Path: m.Vars, Query: r.URL.Query(), Header: w.Header(), View: env.View(r), Faults: w}
	max, tooBig := f.BodyLimit(r)
	if r.ContentLength > max {
		in.TooLarge = tooBig
	} else {
		edge.LimitBody(w, r, max, tooBig)
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			in.Body = func() contract.Body {
				return f.ops.API.ReadBody(m.Name, r.Header.Get("Content-Type"), r.Body, r.ContentLength)
			}
		}
	}
	var pk *sim.Park
	if w.CanPark(r) {
		// A long poll's wait is parked instead of holding this goroutine.
		pk = &sim.Park{}
		in.Ctx = sim.WithPark(in.Ctx, pk)
	}
	f.answer(w, &in, ops.Invoke(f.ops, &in), pk)
}

// answer writes what the operation answered; a call whose wait was parked
// is handed over to the edge, which serves it again (ops.Resume) with the
// request's context as it then is, when there is something to look at,
// and again until it is answered.
func (f *Front) answer(w *edge.Writer, in *ops.Invocation, res *ops.Result, pk *sim.Park) {
	defer res.Release()
	if res.Parked {
		// A copy waits, with the first pass's result (it holds no body):
		// the invocation of a call that is not parked stays on the
		// caller's stack.
		held := &heldCall{in: *in, first: res}
		w.Park(held.in.Ctx, pk, held.resume(f, pk))
		return
	}
	out := edge.Outcome{Operation: res.Operation, ErrorCode: res.ErrorCode, Outside: res.Outside}
	if res.Pass.Authenticated() {
		out.Principal = &res.Pass.Principal
	}
	if in.TooLarge != nil && res.Status == http.StatusRequestEntityTooLarge {
		w.Header().Set("Connection", "close") // the unread body must not be taken for the next request
	}
	w.Hand(out)
	w.WriteHeader(res.Status)
	w.Write(res.Body())
}

// heldCall is a parked call, held for when it is served again: one
// allocation per waiting poll.
type heldCall struct {
	in    ops.Invocation
	first *ops.Result
}

func (h *heldCall) resume(f *Front, pk *sim.Park) func(*edge.Writer, context.Context) {
	return func(w *edge.Writer, ctx context.Context) {
		h.in.Ctx = ctx
		f.answer(w, &h.in, ops.Resume(f.ops, &h.in, h.first), pk)
	}
}

// uploadOverhead is what a multipart form or a JSON object may add around
// an image.
const uploadOverhead = 64 << 10

// BodyLimit is the cap of a request's body, and the error of a body over
// it. Uploads are capped near their 10 MiB image limit, so that a larger
// file is refused while it is read, not after it is buffered.
func (f *Front) BodyLimit(r *http.Request) (int64, error) {
	max, tooBig := f.env.BodyCap(r)
	if r.URL.Path == BasePath+"/uploads" {
		limit := int64(sim.MaxImageBytes + uploadOverhead)
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
			limit = int64(base64.StdEncoding.EncodedLen(sim.MaxImageBytes)) + uploadOverhead
		}
		if limit <= max { // else the server's own cap is the tighter one
			return limit, wire.FileTooLarge()
		}
	}
	return max, tooBig
}
