package sim

import (
	"fmt"
	"strings"

	"github.com/mediamock/mediamock/internal/problem"
)

// The engine's errors are the service's (package problem): a kind for the
// status, a stable wire code, a message and details. Only the HTTP layer
// maps kinds to statuses.
type (
	// Kind classifies an error.
	Kind = problem.Kind
	// Error is the engine's error.
	Error = problem.Error
	// Violation is one broken rule of a request.
	Violation = problem.Violation
	// Violations collects rule violations and turns them into one error.
	Violations = problem.Violations
)

// The kinds of engine errors.
const (
	EINVALID      = problem.EINVALID      // the input breaks a rule (400)
	ENOTFOUND     = problem.ENOTFOUND     // no such resource in the workspace (404)
	EPAYMENT      = problem.EPAYMENT      // not enough credits (402)
	EFORBIDDEN    = problem.EFORBIDDEN    // the plan or token does not allow it (403)
	EUNAUTHORIZED = problem.EUNAUTHORIZED // no usable credentials (401)
	ERATELIMIT    = problem.ERATELIMIT    // over the rate limit (429)
	ECONFLICT     = problem.ECONFLICT     // the resource is in the wrong state (409)
	ETOOLARGE     = problem.ETOOLARGE     // the input is over a size limit (413)
	EUNAVAILABLE  = problem.EUNAVAILABLE  // temporarily unavailable (503)
	EINTERNAL     = problem.EINTERNAL     // anything unexpected (500)
	EUNSUPPORTED  = problem.EUNSUPPORTED  // unsupported media type (415)
	ENOTALLOWED   = problem.ENOTALLOWED   // method not allowed (405)
	// EUNPROCESSABLE: well formed, but the service will not do it (422).
	EUNPROCESSABLE = problem.EUNPROCESSABLE
)

// AsError returns err as an *Error, wrapping anything else as internal.
func AsError(err error) *Error { return problem.AsError(err) }

// IsKind reports whether err is an *Error of the given kind.
func IsKind(err error, k Kind) bool { return problem.IsKind(err, k) }

// InvalidError builds the validation_failed error of the violations: the first
// ones it lists, and the count of the others.
func InvalidError(v []Violation) *Error { return problem.InvalidError(v) }

func notFound(resource string, id uint64) *Error {
	return &Error{
		Kind:    ENOTFOUND,
		Code:    "not_found",
		Message: fmt.Sprintf("%s %d not found.", capitalize(resource), id),
		Details: map[string]any{"resource": strings.ToLower(strings.ReplaceAll(resource, " ", "_")), "id": id},
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
