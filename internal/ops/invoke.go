package ops

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Invocation is one call of an operation, whatever front carried it: the
// operation, who calls, its parameters as the front received them and its
// body as the front decodes it.
type Invocation struct {
	// Ctx bounds the call (the client going away, the request's deadline)
	// and carries what its wait reports to (sim.WithProgress) and where it
	// may park (sim.WithPark).
	Ctx context.Context
	// Front names the front in the coverage and the log: rest, mcp.
	Front string
	// Op is the operation's operationId.
	Op string
	// RequestID names the exchange in log lines.
	RequestID string
	// Authorization is the credential, as an Authorization header value.
	Authorization string
	// Principal, when set, is who the front has authenticated Authorization
	// as already: the gate counts the call without authenticating it again.
	Principal *sim.Principal
	// Path and Query are the call's path and query parameters, as the
	// front received them (strings: the contract parses them as their
	// schemas say).
	Path  map[string]string
	Query url.Values
	// Body gives the call's body, read once (contract.ReadBody,
	// contract.ArgumentsBody) and decoded once (contract.Decode), or the
	// front's error reading it. The pipeline asks for it once, when it
	// first needs it, after the gate: a call refused before is not read.
	// Nil: the call has no body.
	Body func() contract.Body
	// View renders engine records with the links the caller can reach.
	View wire.View
	// Header receives the headers REST answers the operation with:
	// Content-Type, Content-Length, the rate window, Retry-After,
	// WWW-Authenticate. REST passes its response's; another front nil:
	// Invoke makes a map of its own when the strict check reads them.
	Header http.Header
	// TooLarge, when set, refuses the call once its credential is known,
	// without counting it: a declared body over its cap.
	TooLarge error
	// Invalid, when set, is what the front found wrong with the call before
	// the contract could judge it (MCP arguments that are no object).
	Invalid error
	// Extra are violations the front found beside the contract's (MCP
	// arguments the operation does not take), as many as an error lists.
	Extra problem.Violations
	// Admitted, when set, hears the gate's pass as soon as the gate has
	// decided, before the handler runs: MCP puts the rate window on its
	// HTTP response before a progress event sends the headers.
	Admitted func(gate.Pass)
	// Faults is where the call asks for the admission faults it meets:
	// the edge's writer of the HTTP request that carries it, or the rules
	// alone (*RuleFaults: a call without an edge, whose latency the
	// pipeline applies). Nil: none.
	Faults Admission

	input contract.Input // the parameters, and the body once read
	read  bool           // input holds them
}

// body is the call's body, read once.
func (in *Invocation) body() *contract.Body {
	if !in.read {
		in.read = true
		in.input = contract.Input{Path: in.Path, Query: in.Query}
		if in.Body != nil {
			in.input.Body = in.Body()
		}
	}
	return &in.input.Body
}

// resource is the protected resource the call's front is: a token issued
// for another alone does not reach it.
func (in *Invocation) resource() string {
	if in.Front == "mcp" {
		return gate.ResourceMCP
	}
	return gate.ResourceAPI
}

// Result is what an operation answered, as REST sends it.
type Result struct {
	// Operation is the operation the answer counts for in the coverage and
	// the journal: Op, or "" for a refusal the operation does not declare.
	Operation string
	Pass      gate.Pass
	Status    int
	// ErrorCode is the error object's code; "" for a success.
	ErrorCode string
	// Outside says why the answer is outside the contract, when a fault
	// that rehearses drift forced it (a status, code or body the document
	// does not allow); "" for any other answer.
	Outside string
	// Latency is the wall-clock latency injected into a call without an
	// HTTP request (MCP over stdio); the edge delays every other answer.
	Latency time.Duration
	// Parked is set when the call's wait was handed over to the sim.Park
	// of its request's context: nothing is answered yet; the front waits
	// (sim.Engine.ParkWait) and calls Resume.
	Parked bool
	body   wire.Body
	list   ListFacts // the facts of a list page of assets (isList)
	isList bool
}

// List is what the body says besides its items when it is a list page of
// assets (listAssetsPage): a tool result reads it there rather than from
// the bytes. Nil for any other body.
func (r *Result) List() *ListFacts {
	if !r.isList {
		return nil
	}
	return &r.list
}

// Body is the JSON body, with its final newline.
func (r *Result) Body() []byte { return r.body.Bytes() }

// Release gives the body's buffer back once it has been written.
func (r *Result) Release() { r.body.Release() }

// Invoke runs one call of an operation through every step, in order: the
// gate (authentication, rate window, scope), the admission faults (a
// forced status), validation of its input against openapi.json, the
// handler, the JSON body, the strict response check and the coverage.
// Every front calls it; each step is written here once.
func Invoke(env *Env, in *Invocation) *Result {
	if env.Strict && in.Header == nil {
		in.Header = http.Header{} // the headers REST would send, for the strict check
	}
	res := &Result{Operation: in.Op}
	var err error
	switch {
	case in.TooLarge != nil:
		if in.Principal != nil {
			res.Pass = gate.Pass{Principal: *in.Principal, Rate: env.Eng.RateWindow(in.Principal.WorkspaceID)}
		} else {
			res.Pass, err = env.Gate.Identify(in.Authorization, in.resource(), "")
		}
		if err == nil {
			err = in.TooLarge
		}
		if !slices.Contains(env.API.Statuses(in.Op), http.StatusRequestEntityTooLarge) {
			res.Operation = "" // a refusal of the request, not an answer of the operation
		}
	case in.Principal != nil:
		res.Pass, err = env.Gate.CountAs(*in.Principal, env.API.Scope(in.Op))
	default:
		res.Pass, err = env.Gate.Count(in.Authorization, in.resource(), env.API.Scope(in.Op))
	}
	if err == nil && in.TooLarge == nil {
		err = admit(env, in, &res.Pass)
		var r *refusal
		if errors.As(err, &r) && !slices.Contains(env.API.Statuses(in.Op), http.StatusBadRequest) {
			res.Operation = "" // a refusal of the request, not an answer of the operation
		}
	}
	if !res.Pass.Authenticated() && problem.IsKind(err, problem.EUNAUTHORIZED) {
		res.Pass = env.Gate.Anonymous()
	}
	if res.Pass.Counted() && in.Header != nil {
		wire.SetRateHeaders(in.Header, res.Pass.Rate)
	}
	if in.Admitted != nil {
		in.Admitted(res.Pass)
	}
	if err == nil {
		err = in.Invalid
	}
	if err == nil {
		err = validate(env, in)
	}
	return finish(env, in, res, err)
}

// Resume serves again a call whose wait was parked (Result.Parked): its
// gate, admission and validation are those of its first pass (prev), which
// are not taken again; the handler runs again, and its read goes on with
// the wait where the first pass left it (sim.Park).
func Resume(env *Env, in *Invocation, prev *Result) *Result {
	return finish(env, in, &Result{Operation: in.Op, Pass: prev.Pass}, nil)
}

// finish runs the handler of a call the gate let in (err nil), or answers
// with err, then encodes, checks and counts the answer.
func finish(env *Env, in *Invocation, res *Result, err error) *Result {
	var status int
	var body any
	if err == nil {
		if rf, ok := in.Faults.(*RuleFaults); ok {
			// A call without an HTTP request (MCP over stdio) meets its
			// latency here; the edge gives every other its own.
			res.Latency = env.Delay(in.Ctx, rf.latency(in.Op, res.Pass.Principal.WorkspaceID))
		}
		status, body, err = run(env, in, res.Pass.Principal)
		if errors.Is(err, sim.ErrParked) {
			// The front waits off this goroutine, then resumes the call.
			res.Parked = true
			return res
		}
	}
	var fa *forced
	if errors.As(err, &fa) {
		// A forced answer: its status and body as the fault gave them,
		// with the headers of the error object the server made.
		res.Status, res.ErrorCode, res.Outside = fa.status, fa.code, fa.outside
		res.body = wire.HeldBody(fa.body)
		if in.Header != nil && fa.status == http.StatusTooManyRequests {
			wire.SetHeader(in.Header, "Retry-After", strconv.Itoa(int(res.Pass.Rate.RetryAfter/time.Second)))
		}
		if fa.err != nil {
			if c := gate.Challenge(in.Authorization, fa.err); c != "" && in.Header != nil {
				in.Header.Set("WWW-Authenticate", c)
			}
		}
		return answered(env, in, res)
	}
	if err != nil {
		e := problem.AsError(err)
		switch e.Kind {
		case problem.EINTERNAL:
			env.Log.Error("internal error", "request_id", in.RequestID, "front", in.Front, "operation", in.Op, "err", err)
		case problem.ERATELIMIT:
			if in.Header != nil {
				wire.SetHeader(in.Header, "Retry-After", strconv.Itoa(int(res.Pass.Rate.RetryAfter/time.Second)))
			}
		}
		if c := gate.Challenge(in.Authorization, err); c != "" && in.Header != nil {
			in.Header.Set("WWW-Authenticate", c)
		}
		res.ErrorCode = e.Code
		status, body = wire.ErrorOf(err)
	}
	res.Status = status
	ok := true
	if p, isPage := body.(listPage); isPage {
		res.list, res.isList, res.body = ListFacts{IDs: p.ids, More: p.more}, true, wire.PageBody(p.RawJSON)
	} else {
		res.body, ok = wire.Marshal(body)
	}
	if !ok {
		res.Status, res.ErrorCode = http.StatusInternalServerError, "internal_error"
	}
	return answered(env, in, res)
}

// answered sets the answer's body headers, checks it (strict mode; an
// answer outside the contract on purpose is not) and counts it.
func answered(env *Env, in *Invocation, res *Result) *Result {
	setBodyHeaders(in.Header, res)
	if env.Strict && res.Operation != "" && res.Outside == "" {
		check(env, in, res)
	}
	if res.Operation != "" {
		env.Coverage.Hit(res.Pass.Principal.WorkspaceID, in.Front, res.Operation, res.Status)
	}
	return res
}

// admit takes the admission faults of a call the gate let in: a rule of
// the admit stage that targets it answers for the operation (its kind
// forces the answer), which does not run.
func admit(env *Env, in *Invocation, pass *gate.Pass) error {
	if in.Faults == nil || !in.Faults.Faultable() {
		return nil
	}
	req := fault.Request{Operation: in.Op, Workspace: pass.Principal.WorkspaceID}
	if in.Op == "createGeneration" {
		in.body()
		env.API.Decode(in.Op, &in.input, env.OwnFileURL)
		req.Modality = modality(&in.input.Body)
	}
	h := in.Faults.Admission(req)
	if h == nil {
		return nil
	}
	return h.Admit(fault.ForceFunc(func(f fault.Forced) error { return answer(env, in, pass, h, f) }))
}

// modality is the modality a generation's body asks for, read from its
// decoded value as encoding/json would read the field (its name in any
// case when not exactly so); "" when it names none.
func modality(b *contract.Body) string {
	m, _ := b.Value.(map[string]any)
	v, ok := m["modality"]
	if !ok {
		for k, x := range m {
			if strings.EqualFold(k, "modality") {
				v = x
			}
		}
	}
	s, _ := v.(string)
	return s
}

func setBodyHeaders(h http.Header, res *Result) {
	if h == nil {
		return
	}
	vals := []string{"application/json", strconv.Itoa(len(res.body.Bytes()))} // one array for both
	h["Content-Type"], h["Content-Length"] = vals[0:1:1], vals[1:2:2]
}

// validate checks the call's input against openapi.json, with the front's
// own violations: the parameters as the front received them, the body as
// it was decoded.
func validate(env *Env, in *Invocation) error {
	if in.Extra.Len() == 0 && env.API.Accepts(in.Op, in.Path, in.Query) {
		return nil // parameters only, and certainly valid
	}
	in.body()
	err := problem.Merge(env.API.Validate(in.Op, &in.input, env.OwnFileURL), in.Extra)
	// A multipart upload over its own cap is a file too large, not a body.
	if e := problem.AsError(err); err != nil && in.Op == "createUpload" && e.Code == "payload_too_large" && e.Details["limit_bytes"] != env.MaxBodyBytes {
		return wire.FileTooLarge()
	}
	return err
}

// run serves the call with the operation's handler; a panic is the call's
// internal error, logged with its stack.
func run(env *Env, in *Invocation, p sim.Principal) (status int, body any, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			env.Log.Error("panic serving an operation", "request_id", in.RequestID, "front", in.Front, "operation", in.Op, "panic", v, "stack", string(debug.Stack()))
			status, body, err = 0, nil, &problem.Error{Kind: problem.EINTERNAL, Code: "internal_error", Message: "Internal server error."}
		}
	}()
	h := handlers[in.Op]
	if h == nil {
		return 0, nil, &problem.Error{Kind: problem.ENOTFOUND, Code: "not_found", Message: "No operation " + in.Op + "."}
	}
	if !in.read {
		in.input = contract.Input{Path: in.Path, Query: in.Query} // the fast path validated the parameters alone
	}
	return h(&Call{Env: env, Ctx: in.Ctx, Principal: p, View: in.View, input: in.input})
}

// check validates the answer against the operation's response in
// openapi.json (strict mode), with the headers REST sends, and replaces an
// answer that breaks it with a 500 that says why.
func check(env *Env, in *Invocation, res *Result) {
	verr := env.API.ValidateResponse(res.Operation, res.Status, in.Header, res.body.Bytes())
	if verr == nil {
		return
	}
	env.Log.Error("response breaks openapi.json", "request_id", in.RequestID, "front", in.Front, "operation", res.Operation, "status", res.Status, "err", verr)
	res.body.Release()
	res.list, res.isList = ListFacts{}, false
	res.body, _ = wire.Marshal(wire.ErrorBody{Error: wire.ErrorObject{Code: "response_validation_failed",
		Message: "The mock's response breaks openapi.json (strict mode): " + verr.Error(),
		Details: map[string]any{"operation": res.Operation, "status": res.Status}}})
	res.Status, res.ErrorCode = http.StatusInternalServerError, "response_validation_failed"
	setBodyHeaders(in.Header, res)
}
