package ops

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/wire"
)

// forced is an answer a fault of the admit stage forces instead of the
// operation's (a rule of kind status, a Mock-Fault header, Prism's Prefer
// header): its status and body, and why it is outside the contract when
// it rehearses drift.
type forced struct {
	status int
	body   []byte
	err    *problem.Error // the error object the server made, for its headers
	code   string         // the error object's code
	// outside says why the answer is outside the contract; "" when it is
	// one the document declares.
	outside string
}

func (f *forced) Error() string { return fmt.Sprintf("forced answer %d", f.status) }

// refusal is a request's header that asks for an answer its operation
// does not declare (Mock-Fault, Prefer): the request is refused, as for
// any malformed header, not answered by the operation.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// forcedMessages are the server's messages of the error objects it forces,
// by code (429, 500 and 503 keep the gate's, as they ever were).
var forcedMessages = map[string]string{
	"validation_failed":      "The request is invalid (forced by the control API).",
	"invalid_json":           "The request body is not valid JSON (forced by the control API).",
	"invalid_credentials":    "The bearer token is not a known API key or access token (forced by the control API).",
	"missing_credentials":    "Send an API key or access token as Authorization: Bearer <token> (forced by the control API).",
	"insufficient_credits":   "The credit balance is too low for this operation (forced by the control API).",
	"insufficient_scope":     "This operation needs a scope the token lacks (forced by the control API).",
	"publishing_not_allowed": "The workspace's plan does not allow publishing (forced by the control API).",
	"not_found":              "No such resource in this workspace (forced by the control API).",
	"payload_too_large":      "The request body is over the server's cap (forced by the control API).",
	"file_too_large":         "The image is over 10 MiB (forced by the control API).",
	"unsupported_media_type": "The request's Content-Type is not accepted (forced by the control API).",
	"content_moderated":      "The prompt was blocked by the service's content moderation; nothing was created or charged (forced by the control API).",
}

// answer makes the answer a fault of the admit stage forces for the call
// (h struck it): held to what the call's operation declares, unless it
// rehearses drift, which is then marked outside the contract.
func answer(env *Env, in *Invocation, pass *gate.Pass, h *fault.Hit, f fault.Forced) error {
	op := in.Op
	if h.Spec.Operation != op { // a header's, or a rule of every operation: judged for this one now
		if v := f.Check(env.API, op); len(v) > 0 {
			return &refusal{problem.InvalidError(named(h, v))}
		}
	}
	status := f.Status
	if status == 0 {
		status = env.API.Success(op)
	}
	out := &forced{status: status}
	declared := slices.Contains(env.API.DeclaredStatuses(op), status)
	if !declared {
		out.outside = fmt.Sprintf("%s does not declare %d", op, status)
	}
	switch {
	case f.Example != "":
		b, _ := env.API.Example(op, status, f.Example)
		out.body = append(b, '\n')
	case f.Body != nil:
		out.body = f.Body // the rule's own, sent as it is
		if v := env.API.CheckAnswer(op, status, f.Body); declared && len(v) > 0 {
			out.outside = fmt.Sprintf("the body breaks %s's %d answer: %s %s", op, status, v[0].Field, v[0].Reason)
		}
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if status >= 400 && json.Unmarshal(f.Body, &e) == nil {
			out.code = e.Error.Code
		}
	default:
		out.err = forcedError(env, op, status, f, pass)
		out.code = out.err.Code
		if codes := env.API.ErrorCodes(op, status); declared && !slices.Contains(codes, out.code) {
			out.outside = fmt.Sprintf("%s's %d answer does not allow the code %s", op, status, out.code)
		}
		b, _ := wire.Marshal(wire.ErrorBody{Error: wire.ErrorObject{Code: out.err.Code, Message: out.err.Message, Details: out.err.Details}})
		out.body = append([]byte(nil), b.Bytes()...)
		b.Release()
	}
	if status == http.StatusTooManyRequests {
		env.Gate.Forced(status, pass) // Retry-After to the window's reset, nothing left
	}
	return out
}

// forcedError is the error object a forced error status carries: the
// rule's code and message, or the document's first code for the status
// and the server's message for it.
func forcedError(env *Env, op string, status int, f fault.Forced, pass *gate.Pass) *problem.Error {
	code := f.Code
	if code == "" {
		code = defaultCode(env, op, status)
	}
	var e *problem.Error
	if legacy := map[int]string{429: "rate_limited", 500: "internal_error", 503: "service_unavailable"}[status]; legacy == code {
		// As a forced 429, 500 or 503 ever was.
		e = env.Gate.Forced(status, pass).(*problem.Error)
	} else {
		e = &problem.Error{Code: code, Message: forcedMessages[code]}
		if e.Message == "" {
			e.Message = http.StatusText(status) + " (forced by the control API)."
		}
		switch code {
		case "insufficient_scope":
			e.Details = map[string]any{"required_scope": env.API.Scope(op), "granted_scopes": pass.Principal.Scopes}
		case "insufficient_credits":
			if d, err := env.Eng.WorkspaceDetail(pass.Principal.WorkspaceID); err == nil {
				e.Details = map[string]any{"required": d.Balance + 1, "balance": d.Balance}
			}
		case "payload_too_large":
			e.Details = map[string]any{"limit_bytes": env.MaxBodyBytes}
		}
	}
	e.Kind, _ = wire.KindOf(status)
	if f.Message != "" {
		e.Message = f.Message
	}
	return e
}

// defaultCode is the code a forced error status carries: the first the
// document allows the operation's answer of status, or any operation's;
// for a status no operation declares, its name in snake case.
func defaultCode(env *Env, op string, status int) string {
	if codes := env.API.ErrorCodes(op, status); len(codes) > 0 {
		return codes[0]
	}
	if codes := env.API.ErrorCodes("", status); len(codes) > 0 {
		return codes[0]
	}
	if t := http.StatusText(status); t != "" {
		return strings.ToLower(strings.NewReplacer(" ", "_", "-", "_", "'", "").Replace(t))
	}
	return "forced_status"
}

// named names violations after where a header's fault was asked for
// (Mock-Fault: status, Prefer: code); a rule's keep their names.
func named(h *fault.Hit, v []problem.Violation) []problem.Violation {
	out := slices.Clone(v)
	for i := range out {
		switch h.Rule {
		case fault.HeaderRule:
			out[i].In, out[i].Field = "header", fault.Header+": "+out[i].Field
		case fault.PreferRule:
			out[i].In, out[i].Field = "header", fault.PreferHeader+": "+fault.PreferName(out[i].Field)
		}
	}
	return out
}
