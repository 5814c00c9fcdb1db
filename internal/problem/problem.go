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

// MaxViolations is how many violations an error lists, on every door:
// the first ones found, in the order the validator finds them. Its
// details.more_violations says how many more there were (absent when
// none), and its message names the listed ones and the count of the rest.
// A validator keeps no more than these: past them it counts, so that a
// body with a million unknown fields costs no more to refuse than its own
// bytes.
const MaxViolations = 20

// Violations collects the violations of a request as an error lists them:
// it keeps the first MaxViolations and counts the others. The zero value
// is empty.
type Violations struct {
	list []Violation
	more int
}

// Add appends a body violation.
func (v *Violations) Add(field, format string, args ...any) {
	if v.full() {
		return
	}
	v.list = append(v.list, Violation{In: "body", Field: field, Reason: fmt.Sprintf(format, args...)})
}

// AddAllowed appends a body violation that lists the allowed values.
func (v *Violations) AddAllowed(field string, allowed []any, format string, args ...any) {
	if v.full() {
		return
	}
	v.list = append(v.list, Violation{In: "body", Field: field, Reason: fmt.Sprintf(format, args...), Allowed: allowed})
}

// Append appends violations, kept while there is room, counted past it.
func (v *Violations) Append(x ...Violation) {
	for i := range x {
		if !v.full() {
			v.list = append(v.list, x[i])
		}
	}
}

// Uncounted adds n violations found but not kept (a validator that stopped
// keeping them); they come after every one appended so far.
func (v *Violations) Uncounted(n int) { v.more += n }

// full counts one more violation and reports whether it has no room.
func (v *Violations) full() bool {
	if len(v.list) < MaxViolations && v.more == 0 {
		return false
	}
	v.more++
	return true
}

// List is the violations kept: the first MaxViolations at most.
func (v Violations) List() []Violation { return v.list }

// Len is how many violations there were, kept or counted.
func (v Violations) Len() int { return len(v.list) + v.more }

// Err returns nil when there are no violations, else one validation_failed error.
func (v Violations) Err() error {
	if v.Len() == 0 {
		return nil
	}
	return Invalid(v.list, v.more)
}

// InvalidError builds the validation_failed error of the violations v: it
// lists the first MaxViolations of them, and says how many more there
// were.
func InvalidError(v []Violation) *Error { return Invalid(v, 0) }

// Invalid builds the validation_failed error of the violations v and more
// found past them that v does not hold: it lists the first MaxViolations
// of v, and says how many more there were (in details.more_violations, and
// at the end of the message).
func Invalid(v []Violation, more int) *Error {
	if len(v) > MaxViolations {
		more += len(v) - MaxViolations
		v = v[:MaxViolations:MaxViolations]
	}
	var msg strings.Builder
	total := len(v) + more
	noun := "problem"
	if total != 1 {
		noun = "problems"
	}
	fmt.Fprintf(&msg, "%d %s with the request: ", total, noun)
	for i, x := range v {
		if i > 0 {
			msg.WriteString("; ")
		}
		msg.WriteString(x.In)
		if x.Field != "" {
			msg.WriteString(" " + x.Field)
		}
		msg.WriteString(": " + x.Reason)
	}
	details := map[string]any{"violations": v}
	if more > 0 {
		fmt.Fprintf(&msg, "; and %d more", more)
		details["more_violations"] = more
	}
	return &Error{Kind: EINVALID, Code: "validation_failed", Message: msg.String(), Details: details}
}

// Of is what a validation_failed error lists and how many more it counts;
// ok is false for any other error.
func Of(err error) (v []Violation, more int, ok bool) {
	e := AsError(err)
	if e.Code != "validation_failed" {
		return nil, 0, false
	}
	v, ok = e.Details["violations"].([]Violation)
	more, _ = e.Details["more_violations"].(int)
	return v, more, ok
}

// Merge adds violations a front found itself (an MCP tool's unknown
// arguments) to a validator's verdict: nil, a validation_failed error, or
// an error that answers on its own (invalid JSON), which wins. The extra
// ones come after the validator's.
func Merge(err error, extra Violations) error {
	if extra.Len() == 0 {
		return err
	}
	if err == nil {
		return extra.Err()
	}
	if v, more, ok := Of(err); ok {
		var all Violations
		all.Append(v...)
		all.Uncounted(more)
		all.Append(extra.list...)
		all.Uncounted(extra.more)
		return all.Err()
	}
	return err
}

// TooLarge is the error of a request body over limit bytes.
func TooLarge(limit int64) *Error {
	return &Error{Kind: ETOOLARGE, Code: "payload_too_large",
		Message: fmt.Sprintf("The request body is over %d bytes.", limit), Details: map[string]any{"limit_bytes": limit}}
}
