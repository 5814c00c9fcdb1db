// Package rest is the REST front: the service's operations under /api/v1,
// in the order of its specification, and the files under /files/. Every
// operation passes the gate (authentication, rate limit, scope, forced
// faults), is validated against openapi.json and is served by the engine.
package rest

import (
	"encoding/base64"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/ops"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// BasePath is the REST base path of the service.
const BasePath = "/api/v1"

// Front serves the REST API of one server.
type Front struct {
	env      *front.Env
	document []byte // openapi.json, served at /api/v1/openapi.json
	etags    etags  // of files served
}

// New returns the REST front of a server; document is openapi.json.
func New(env *front.Env, document []byte) *Front {
	for _, op := range ops.Operations() {
		if !env.API.Has(op.ID) {
			panic("operation " + op.ID + " is not in openapi.json")
		}
	}
	return &Front{env: env, document: document}
}

// Operations lists the operations with their REST paths, in the order of
// the specification.
func Operations() []ops.Operation {
	out := ops.Operations()
	for i := range out {
		out[i].Path = BasePath + out[i].Path
	}
	return out
}

const documentOp = "/openapi.json"

// table matches requests to operations, once per process.
var table = sync.OnceValue(func() *front.Table {
	t := front.NewTable(BasePath)
	for _, op := range ops.Operations() {
		t.Add(op.Method, op.Path, op.ID)
	}
	t.Add(http.MethodGet, "/openapi.json", documentOp)
	t.Add(http.MethodHead, "/openapi.json", documentOp)
	return t.Seal()
})

// Serve serves a request that passed the edge. Every answer to a request
// whose credential names a workspace carries its rate window; only the
// operations count.
func (f *Front) Serve(w *front.Writer, r *http.Request) {
	m := front.Match{}
	files := strings.HasPrefix(r.URL.Path, wire.FilesPath)
	if !files {
		m = table().Match(r)
	}
	if files || m.Name == "" || m.Name == documentOp {
		f.peek(w, r)
		if max := f.env.MaxBodyBytes; !front.LimitBody(w, r, max, problem.TooLarge(max)) {
			return
		}
	}
	switch {
	case files:
		f.serveFile(w, r)
	case m.Allow != "":
		w.Header().Set("Allow", m.Allow)
		front.WriteError(w, wire.MethodNotAllowed(r.Method, r.URL.Path, m.Allow, strings.Split(m.Allow, ", ")))
	case m.Name == "":
		front.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
	case m.Name == documentOp:
		front.ServeDocument(w, r, f.document)
	default:
		f.operation(w, r, m)
	}
}

// peek puts the rate window of the request's workspace, if its credential
// names one, on an answer that does not count.
func (f *Front) peek(w *front.Writer, r *http.Request) {
	if r.Header.Get("Authorization") == "" {
		return
	}
	if pass, err := f.env.Gate.Identify(r.Header.Get("Authorization"), ""); err == nil {
		w.SetPrincipal(pass.Principal)
		front.SetRateHeaders(w.Header(), pass.Rate)
	}
}

// operation runs an operation: the body cap, the gate, validation, injected
// latency, the handler.
func (f *Front) operation(w *front.Writer, r *http.Request, m front.Match) {
	env := f.env
	max, tooBig := f.BodyLimit(r)
	if r.ContentLength > max {
		// Authentication comes first (from the headers: the body is never
		// read); the refusal does not count against the window.
		if slices.Contains(env.API.Statuses(m.Name), http.StatusRequestEntityTooLarge) {
			w.SetOperation(m.Name)
		}
		pass, err := env.Gate.Identify(r.Header.Get("Authorization"), "")
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="api", error="invalid_token"`)
			front.WriteError(w, err)
			return
		}
		w.SetPrincipal(pass.Principal)
		front.SetRateHeaders(w.Header(), pass.Rate)
		front.LimitBody(w, r, max, tooBig)
		return
	}
	front.LimitBody(w, r, max, tooBig)
	w.SetOperation(m.Name)
	pass, err := env.Gate.Enter(r.Header.Get("Authorization"), m.Name, env.API.Scope(m.Name))
	if pass.Authenticated() {
		w.SetPrincipal(pass.Principal)
		front.SetRateHeaders(w.Header(), pass.Rate)
	}
	if err != nil {
		switch sim.AsError(err).Kind {
		case sim.EUNAUTHORIZED:
			w.Header().Set("WWW-Authenticate", `Bearer realm="api", error="invalid_token"`)
		case sim.ERATELIMIT:
			w.Header().Set("Retry-After", strconv.Itoa(int(pass.Rate.RetryAfter/time.Second)))
		}
		front.WriteError(w, err)
		return
	}
	query := r.URL.Query()
	if err := env.API.ValidateRequest(r, m.Name, m.Vars, query); err != nil {
		if e := sim.AsError(err); m.Name == "createUpload" && e.Code == "payload_too_large" && e.Details["limit_bytes"] != env.MaxBodyBytes {
			err = wire.FileTooLarge()
		}
		front.WriteError(w, err)
		return
	}
	if d := env.Gate.Latency(m.Name); d > 0 {
		w.SetLatency(d)
		ctx, cancel := env.UntilStop(r.Context())
		env.Sleep(ctx, d)
		cancel()
	}
	status, body, err := ops.Run(m.Name, &ops.Call{Env: env, Request: r, Principal: pass.Principal, Vars: m.Vars, Query: query, View: env.View(r)})
	if raw, ok := body.(wire.RawJSON); ok && err == nil {
		front.WriteRaw(w, status, raw)
		wire.ReleasePage(raw)
		return
	}
	front.Answer(w, status, body, err)
}

// uploadOverhead is what a multipart form or a JSON object may add around
// an image.
const uploadOverhead = 64 << 10

// BodyLimit is the cap of a request's body, and the error of a body over
// it. Uploads are capped near their 10 MiB image limit, so that a larger
// file is refused while it is read, not after it is buffered.
func (f *Front) BodyLimit(r *http.Request) (int64, error) {
	max := f.env.MaxBodyBytes
	if r.URL.Path == BasePath+"/uploads" {
		limit := int64(sim.MaxImageBytes + uploadOverhead)
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
			limit = int64(base64.StdEncoding.EncodedLen(sim.MaxImageBytes)) + uploadOverhead
		}
		if limit <= max { // else the server's own cap is the tighter one
			return limit, wire.FileTooLarge()
		}
	}
	return max, problem.TooLarge(max)
}
