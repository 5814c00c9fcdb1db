// Package problem is the service's error, shared by the engine, the
// contract checker and every front: a kind (what went wrong, mapped to an
// HTTP status only at the edge), a stable wire code, a message for people
// and optional details; and the violations a validation_failed error lists.
//
// It imports nothing of the project, so that a client-side checker (the
// conformance suite) can speak the spec's errors without the simulator:
//
//	return problem.InvalidError([]problem.Violation{{In: "body", Field: "count", Reason: "must be at most 4"}})
//
// The engine re-exports these names (sim.Error, sim.EINVALID, ...).
package problem

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies an error. Only the HTTP edge maps kinds to statuses.
type Kind string

// The kinds of errors.
const (
	EINVALID      Kind = "invalid"      // the input breaks a rule (400)
	ENOTFOUND     Kind = "not_found"    // no such resource in the workspace (404)
	EPAYMENT      Kind = "payment"      // not enough credits (402)
	EFORBIDDEN    Kind = "forbidden"    // the plan or token does not allow it (403)
	EUNAUTHORIZED Kind = "unauthorized" // no usable credentials (401)
	ERATELIMIT    Kind = "rate_limited" // over the rate limit (429)
	ECONFLICT     Kind = "conflict"     // the resource is in the wrong state (409)
	ETOOLARGE     Kind = "too_large"    // the input is over a size limit (413)
	EUNAVAILABLE  Kind = "unavailable"  // temporarily unavailable (503)
	EINTERNAL     Kind = "internal"     // anything unexpected (500)
	EUNSUPPORTED  Kind = "unsupported"  // unsupported media type (415)
	ENOTALLOWED   Kind = "not_allowed"  // method not allowed (405)
	// EUNPROCESSABLE: well formed, but the service will not do it, such as
	// a prompt its moderation blocks (422).
	EUNPROCESSABLE Kind = "unprocessable"
)

// Error is the service's error: a kind for the status, a stable wire code,
// a human message and optional structured details.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// AsError returns err as an *Error, wrapping anything else as internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: EINTERNAL, Code: "internal_error", Message: "Internal server error."}
}

// IsKind reports whether err is an *Error of the given kind.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// Violation is one broken rule of a request: where, which field and why.
type Violation struct {
	In      string `json:"in"`
	Field   string `json:"field"`
	Reason  string `json:"reason"`
	Allowed []any  `json:"allowed,omitempty"`
}

// Violations collects rule violations and turns them into one error.
type Violations []Violation

// Add appends a body violation.
func (v *Violations) Add(field, format string, args ...any) {
	*v = append(*v, Violation{In: "body", Field: field, Reason: fmt.Sprintf(format, args...)})
}

// AddAllowed appends a body violation that lists the allowed values.
func (v *Violations) AddAllowed(field string, allowed []any, format string, args ...any) {
	*v = append(*v, Violation{In: "body", Field: field, Reason: fmt.Sprintf(format, args...), Allowed: allowed})
}

// Err returns nil when there are no violations, else one validation_failed error.
func (v Violations) Err() error {
	if len(v) == 0 {
		return nil
	}
	return InvalidError(v)
}

// InvalidError builds the validation_failed error that lists every violation.
func InvalidError(v []Violation) *Error {
	parts := make([]string, 0, len(v))
	for _, x := range v {
		where := x.In
		if x.Field != "" {
			where += " " + x.Field
		}
		parts = append(parts, where+": "+x.Reason)
	}
	noun := "problem"
	if len(v) != 1 {
		noun = "problems"
	}
	return &Error{
		Kind:    EINVALID,
		Code:    "validation_failed",
		Message: fmt.Sprintf("%d %s with the request: %s", len(v), noun, strings.Join(parts, "; ")),
		Details: map[string]any{"violations": v},
	}
}

// Merge adds violations a front found itself (an MCP tool's unknown
// arguments) to a validator's verdict: nil, a validation_failed error, or
// an error that answers on its own (invalid JSON), which wins.
func Merge(err error, extra []Violation) error {
	if len(extra) == 0 {
		return err
	}
	if err == nil {
		return InvalidError(extra)
	}
	if e := AsError(err); e.Code == "validation_failed" {
		if v, ok := e.Details["violations"].([]Violation); ok {
			return InvalidError(append(append([]Violation{}, v...), extra...))
		}
	}
	return err
}

// TooLarge is the error of a request body over limit bytes.
func TooLarge(limit int64) *Error {
	return &Error{Kind: ETOOLARGE, Code: "payload_too_large",
		Message: fmt.Sprintf("The request body is over %d bytes.", limit), Details: map[string]any{"limit_bytes": limit}}
}
